"""What blocks, in one place: the calls of the libraries a Flask codebase uses
that wait on the network, the disk, a process or the clock, by what
tools/origins.py says a callee is ("requests.Session().get": the get of
something requests.Session() made). tools/blocking_audit.py asks kind_of().

kind: database (SQL drivers, SQLAlchemy and Flask-SQLAlchemy, redis,
pymongo), http (requests, httpx, urllib, boto3), broker (Celery), mail
(smtplib), file (open, send_file, shutil, a Path's I/O), sleep, subprocess.
"""

import sys


def kinds(kind, *names):
    """{name: kind} for each of the space-separated names."""
    return dict.fromkeys(" ".join(names).split(), kind)


VERBS = "get post put patch delete head options request stream".split()
# Functions that block, by their full dotted name.
CALLS = {
    **kinds("sleep", "time.sleep"),
    **kinds("file", "open io.open shutil.copy shutil.copy2 shutil.copyfile shutil.copytree"),
    **kinds("file", "shutil.move shutil.rmtree flask.send_file flask.send_from_directory"),
    **kinds("http", *(f"{library}.{verb}" for library in ("requests", "httpx") for verb in VERBS)),
    **kinds("http", "urllib.request.urlopen urllib.request.urlretrieve"),
    **kinds("subprocess", "os.system os.popen subprocess.run subprocess.call subprocess.Popen"),
    **kinds("subprocess", "subprocess.check_call subprocess.check_output subprocess.getoutput"),
    **kinds("database", "psycopg2.connect psycopg.connect pymysql.connect sqlite3.connect"),
    **kinds("mail", "smtplib.SMTP smtplib.SMTP_SSL"),  # connects when given a host
}

EVERY = None  # every method of the object blocks, but those in LAZY
# Methods that only build something, of objects whose other methods block.
LAZY = {"cursor", "pipeline", "mount", "client", "resource", "Bucket", "Object", "Table"}
LAZY |= {"generate_presigned_url", "generate_presigned_post"}  # boto3 signs them locally
# A session's and a query's methods that run SQL (add(), select(), filter_by() do not).
SQL = set(
    "execute scalars scalar get get_or_404 first first_or_404 one one_or_404 one_or_none all"
    " count paginate commit flush refresh merge rollback connect begin".split()
)
# What an object is made by (tools/origins.py's form): its kind, and its methods that block.
OBJECTS = {
    **{made: ("http", EVERY) for made in ("requests.Session()", "requests.session()")},
    **{made: ("http", EVERY) for made in ("httpx.Client()", "urllib3.PoolManager()")},
    "http.client.HTTPConnection()": ("http", EVERY),
    "http.client.HTTPSConnection()": ("http", EVERY),
    **{f"boto3.{made}()": ("http", EVERY) for made in ("client", "resource")},
    **{f"boto3.Session().{made}()": ("http", EVERY) for made in ("client", "resource")},
    **{f"redis.{made}()": ("database", EVERY) for made in ("Redis", "StrictRedis", "from_url")},
    "redis.Redis.from_url()": ("database", EVERY),
    "pymongo.MongoClient()": ("database", EVERY),
    **{f"{driver}.connect()": ("database", EVERY) for driver in ("psycopg2", "psycopg")},
    **{f"{driver}.connect()": ("database", EVERY) for driver in ("pymysql", "sqlite3")},
    "psycopg2.pool.SimpleConnectionPool()": ("database", EVERY),
    "psycopg2.pool.ThreadedConnectionPool()": ("database", EVERY),
    "psycopg_pool.ConnectionPool()": ("database", EVERY),
    "flask_sqlalchemy.SQLAlchemy()": ("database", SQL),  # db.session.scalars, Model.query.get
    "sqlalchemy.create_engine()": ("database", SQL),
    "sqlalchemy.orm.Session()": ("database", SQL),
    "sqlalchemy.orm.sessionmaker()": ("database", SQL),
    "sqlalchemy.orm.scoped_session()": ("database", SQL),
    "smtplib.SMTP()": ("mail", EVERY),
    "smtplib.SMTP_SSL()": ("mail", EVERY),
    "celery.Celery()": ("broker", {"send_task"}),
    # A function under @celery.task or @shared_task is this (tools/origins.py: MAKERS).
    "celery.Celery().task()": ("broker", {"delay", "apply_async"}),
    "celery.shared_task()": ("broker", {"delay", "apply_async"}),
    "pathlib.Path()": ("file", {"read_text", "write_text", "read_bytes", "write_bytes", "open"}),
}
# Decorators that make a function into another object: calling it is calling that.
MAKERS = {name: f"{name}()" for name in ("celery.Celery().task", "celery.shared_task")}
MAKERS |= {f"{name}()": made for name, made in MAKERS.items()}  # @celery.task(bind=True)
# Methods that block on an object nothing tells the type of (a connection a
# codebase's own pool hands out): every DB-API driver's.
DRIVER_METHODS = set(
    "execute executemany executescript fetchone fetchall fetchmany fetchrow fetchval"
    " commit rollback getconn".split()
)
# A SQLAlchemy relationship loaded on first access, unless its lazy= says otherwise.
EAGER = {"joined", "selectin", "subquery", "immediate", "raise", "raise_on_sql", "noload"}


def known(callee):
    """Whether the table knows the library callee is from (the standard
    library's, or one of OBJECTS): then kind_of's None means it does not block."""
    root = callee.split(".")[0].removesuffix("()")
    return root in sys.stdlib_module_names or any(callee.startswith(made) for made in OBJECTS)


def kind_of(callee):
    """The kind of blocking call a callee is (a dotted origin), or None. A
    method of what a blocking call returned (a response's .json(), a
    result's .first()) has its data already."""
    if callee in CALLS:
        return CALLS[callee]
    receiver = callee.rpartition(".")[0]
    if receiver.endswith("()") and receiver not in OBJECTS and kind_of(receiver[:-2]):
        return None
    for made in sorted(OBJECTS, key=len, reverse=True):  # celery.Celery().task() first
        # its method, or one of what it makes: made().x, made()().x
        if callee.startswith(made) and callee[len(made) : len(made) + 1] in (".", "("):
            kind, methods = OBJECTS[made]
            method = callee.rsplit(".", 1)[1]
            blocks = method not in LAZY if methods is EVERY else method in methods
            return kind if blocks else None
    return None
