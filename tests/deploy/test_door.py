"""The door: nginx as deployed (proxy/door.conf, door.inc, tls.inc, the
write token of write-token.sh), started on 127.0.0.1 by tools/proxy.py with
a certificate of its own. Over the rate a client gets the contract's JSON
429 with Retry-After, writes sooner than reads; with a token configured, a
POST without it gets the JSON 401 and one with it is stored; every request
is a JSON line in the access log with its id, status, duration and upstream.
compose.yaml's proxy, run here as compose runs it (its entrypoint, command
and mounted files, with the image's paths moved), is the same door.
"""

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests

from bench.load import openloop, wrk
from bench.routes import ROUTES
from bench.sut import verify
from common.admission import RETRY_AFTER
from common.contract import OVERLOADED
from db.embedded import free_port
from tests.deploy.test_compose import compose_config, replica_limits
from tests.deploy.test_compose import tool as compose_tool
from tests.faults import nginx
from tests.helpers import port_of, query, serve, wait_until
from tests.toy_http import Connection, ThreadedServer
from tools import ROOT, children, proxy

# With "." and "+", the characters a regular expression would read otherwise.
TOKEN = "t0ken.For+the-Door-test-0123456789abcdef"
REVIEW = {"film_id": 995, "rating": 4}


def started(app_port, tmp_path, token_file=None, tls=True):
    nginx()
    log = open(tmp_path / "nginx.log", "w")  # noqa: SIM115 (closed after the handle's stop)
    handle = proxy.start(app_port, free_port(), log, door=proxy.Door(token_file, tls))
    handle.verify = f"{handle.prefix}/tls/tls.crt"
    return handle, log


@pytest.fixture
def door(tmp_path):
    """The door in front of nothing: whatever passes its limits is a 503
    (app unavailable), at once."""
    handle, log = started(free_port(), tmp_path)
    handle.tmp_path = tmp_path
    yield handle
    proxy.stop(handle)
    log.close()


def statuses(handle, method, count):
    with requests.Session() as session:
        answers = [
            session.request(method, f"{handle.url}/reviews/", json=REVIEW, verify=handle.verify)
            if method == "POST"
            else session.get(f"{handle.url}/films/995/", verify=handle.verify)
            for _ in range(count)
        ]
    return answers


@pytest.mark.slow  # starts nginx
def test_over_the_rate_is_a_json_429_with_retry_after(door):
    """door.inc's write burst is 40: of 80 writes at once, the last are 429,
    each the contract's JSON with Retry-After."""
    answers = statuses(door, "POST", 80)
    refused = [answer for answer in answers if answer.status_code == 429]
    assert 20 <= len(refused) <= 60, [answer.status_code for answer in answers]
    assert {answer.status_code for answer in answers} == {503, 429}
    for answer in refused:
        assert answer.json() == {"error": "too many requests"}
        assert answer.headers["Content-Type"] == "application/json"
        assert int(answer.headers["Retry-After"]) >= 1


@pytest.mark.slow  # starts nginx
def test_writes_are_limited_before_reads(door):
    """The same 80 requests at once as reads: all under the read burst."""
    answers = statuses(door, "GET", 80)
    assert {answer.status_code for answer in answers} == {503}


@pytest.mark.slow  # starts nginx
def test_the_benchmarks_door_without_a_token_opens_writes_in_so_many_words(door):
    """tools/proxy.py's door with no token file says WRITES_OPEN=1 itself."""
    answer = requests.post(f"{door.url}/reviews/", json=REVIEW, verify=door.verify)
    assert answer.status_code == 503  # past the door, to the app that is not there


def write_token_sh(tmp_path, token_file, **environment):
    """proxy/write-token.sh TOKEN_FILE OUTPUT echo started, as an entrypoint
    runs it, with the environment's WRITES_OPEN replaced by `environment`'s."""
    env = {key: value for key, value in os.environ.items() if key != "WRITES_OPEN"}
    return subprocess.run(
        ["sh", str(ROOT / "proxy" / "write-token.sh"), str(token_file)]
        + [str(tmp_path / "nginx" / "out.conf"), "echo", "started"],
        env={**env, **environment},
        capture_output=True,
        text=True,
    )


@pytest.mark.parametrize("writes_open", [None, "", "0"])
def test_no_token_file_refuses_to_start_in_one_line(tmp_path, writes_open):
    """The door meant to be shut fails shut: no token's file (a Secret not
    yet created, a mount forgotten) and no word that writes are open, and
    nginx is never started, its map never written."""
    environment = {} if writes_open is None else {"WRITES_OPEN": writes_open}
    completed = write_token_sh(tmp_path, tmp_path / "no-token", **environment)
    assert completed.returncode == 2 and completed.stdout == ""
    [line] = completed.stderr.splitlines()
    assert "no-token" in line and "WRITES_OPEN=1" in line and "Traceback" not in line
    assert not (tmp_path / "nginx" / "out.conf").exists()


def test_writes_open_only_when_said_in_so_many_words(tmp_path):
    """WRITES_OPEN=1 and no token: every write passes, and it says so; any
    other word for it is refused in one line; a token present shuts the door
    whatever WRITES_OPEN says."""
    opened = write_token_sh(tmp_path, tmp_path / "no-token", WRITES_OPEN="1")
    assert opened.returncode == 0 and opened.stdout == "started\n"
    assert "writes need no token" in opened.stderr
    assert "default 1;" in (tmp_path / "nginx" / "out.conf").read_text()
    for word in ("yes", "true", "on"):
        refused = write_token_sh(tmp_path, tmp_path / "no-token", WRITES_OPEN=word)
        assert refused.returncode == 2 and refused.stdout == ""
        assert len(refused.stderr.splitlines()) == 1 and "WRITES_OPEN" in refused.stderr
    token_file = tmp_path / "write_token"
    token_file.write_text(TOKEN + "\n")
    shut = write_token_sh(tmp_path, token_file, WRITES_OPEN="1")
    assert shut.returncode == 0
    assert "default 0;" in (tmp_path / "nginx" / "out.conf").read_text()


@pytest.fixture(scope="module")
def app_server(database_url, tmp_path_factory):
    yield from serve("flask", database_url, tmp_path_factory.mktemp("logs"), web_workers=1)


@pytest.fixture
def guarded(app_server, tmp_path):
    """The door with a write token, in front of Flask."""
    token_file = tmp_path / "write_token"
    token_file.write_text(TOKEN + "\n")
    handle, log = started(port_of(app_server), tmp_path, token_file)
    yield handle
    proxy.stop(handle)
    log.close()


@pytest.mark.parametrize(
    "authorization",
    [
        None,
        "Bearer wrong",
        f"Basic {TOKEN}",
        f"Bearer {TOKEN}x",
        f"x Bearer {TOKEN}",
        # nginx matches a map's strings ignoring case: the token's letters count.
        f"Bearer {TOKEN.swapcase()}",
        f"Bearer {TOKEN.upper()}",
        # "." and "+" are themselves, not any character and "one or more r".
        f"Bearer {TOKEN.replace('.', 'x')}",
        f"Bearer {TOKEN.replace('+', 'r')}",
    ],
)
def test_a_write_without_the_token_is_refused(guarded, db, authorization):
    headers = {"Authorization": authorization} if authorization else {}
    before = query(db, "SELECT count(*) FROM review")
    answer = requests.post(
        f"{guarded.url}/reviews/", json=REVIEW, headers=headers, verify=guarded.verify
    )
    assert answer.status_code == 401
    assert answer.json() == {"error": "authorization required"}
    assert answer.headers["WWW-Authenticate"].startswith("Bearer")
    assert query(db, "SELECT count(*) FROM review") == before


@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER"])
def test_a_write_with_the_token_is_stored_and_reads_need_none(guarded, db, scheme):
    """The token exactly as it is, after a scheme of any case (RFC 9110)."""
    headers = {"Authorization": f"{scheme} {TOKEN}"}
    answer = requests.post(
        f"{guarded.url}/reviews/", json=REVIEW, headers=headers, verify=guarded.verify
    )
    assert answer.status_code == 201, answer.text
    [[rating]] = query(
        db, "SELECT rating FROM review WHERE review_id = %s", answer.json()["review_id"]
    )
    assert rating == REVIEW["rating"]
    assert requests.get(f"{guarded.url}/films/995/", verify=guarded.verify).status_code == 200


def logged(handle):
    if not handle.access_log.exists():
        return []
    return [json.loads(line) for line in handle.access_log.read_text().splitlines()]


def test_every_request_is_a_json_line_in_the_access_log(guarded):
    url = f"{guarded.url}/films/995/"
    assert requests.get(url, verify=guarded.verify).status_code == 200
    assert (
        requests.post(f"{guarded.url}/reviews/", json=REVIEW, verify=guarded.verify).status_code
        == 401
    )
    # nginx writes the line once the answer is sent: a moment after the client has it.
    assert wait_until(lambda: len(logged(guarded)) >= 2, timeout=5), logged(guarded)
    lines = logged(guarded)
    read, write = lines[-2:]
    assert (read["request"], read["status"]) == ("GET /films/995/ HTTP/1.1", 200)
    assert (write["request"], write["status"], write["upstream"]) == (
        "POST /reviews/ HTTP/1.1",
        401,
        "",
    )
    assert re.fullmatch(r"127\.0\.0\.1:\d+", read["upstream"])
    for line in (read, write):
        assert re.fullmatch(r"[0-9a-f]{32}", line["request_id"])
        assert isinstance(line["duration"], float) and line["duration"] >= 0
    assert read["request_id"] != write["request_id"]


def test_the_access_log_holds_no_query_string(guarded):
    """What a client puts in the query string never reaches the access log:
    its request line is logged without the query, as is the token."""
    secret = "s3cret-in-the-query-0123456789"
    read = requests.get(f"{guarded.url}/films/995/?q={secret}&x=1", verify=guarded.verify)
    assert read.status_code == 200
    write = requests.post(
        f"{guarded.url}/reviews/?note={secret}",
        json=REVIEW,
        headers={"Authorization": f"Bearer {TOKEN}"},
        verify=guarded.verify,
    )
    assert write.status_code == 201, write.text
    assert wait_until(lambda: len(logged(guarded)) >= 2, timeout=5), logged(guarded)
    assert [line["request"] for line in logged(guarded)[-2:]] == [
        "GET /films/995/ HTTP/1.1",
        "POST /reviews/ HTTP/1.1",
    ]
    text = guarded.access_log.read_text()
    assert secret not in text and TOKEN not in text


CREDENTIAL_IN_QUERY = {"error": "credentials go in the Authorization header, not in the URL"}


@pytest.mark.parametrize(
    ("method", "query"),
    [
        ("GET", "access_token={}"),
        ("GET", "year.gt=2000&Password={}"),
        ("GET", "API_KEY={}&x=1"),
        ("GET", "apikey={}"),
        ("GET", "sig={}"),
        ("HEAD", "token={}"),
        ("POST", "token={}"),
    ],
)
def test_a_credential_in_the_query_string_is_refused_before_any_log(door, method, query):
    """nginx's error log names a request's whole line when it fails it (here
    every request that passes the door: no app is there). A query naming a
    credential is refused first, and neither log holds it; one that names
    none passes and is failed, and the error log holds it, as the test's
    witness that the log is read."""
    secret, witness = "s3cret-in-the-query-0123456789", "n0t-a-credential-9876543210"
    url = f"{door.url}/reviews/" if method == "POST" else f"{door.url}/films/995/"
    answer = requests.request(method, f"{url}?{query.format(secret)}", verify=door.verify)
    assert answer.status_code == 400
    if method != "HEAD":
        assert answer.json() == CREDENTIAL_IN_QUERY
    passed = requests.get(f"{url}?year.gt=2000&tokens={witness}", verify=door.verify)
    assert passed.status_code == 503, passed.text  # past the door, to no app
    error_log = door.tmp_path / "nginx.log"
    assert wait_until(lambda: witness in error_log.read_text(), timeout=5)
    for log in (error_log, door.access_log):
        assert secret not in log.read_text()


def test_a_write_with_a_credential_in_its_query_string_is_not_stored(guarded, db):
    before = query(db, "SELECT count(*) FROM review")
    answer = requests.post(
        f"{guarded.url}/reviews/?access_token={TOKEN}",
        json=REVIEW,
        headers={"Authorization": f"Bearer {TOKEN}"},
        verify=guarded.verify,
    )
    assert (answer.status_code, answer.json()) == (400, CREDENTIAL_IN_QUERY)
    assert query(db, "SELECT count(*) FROM review") == before
    assert requests.get(f"{guarded.url}/films/?year.gt=2000&tokens=1", verify=guarded.verify).ok


@pytest.mark.parametrize(
    "token",
    [
        "short",
        "has space in it and is long enough 0123456789",
        'quote"0123456789012345678901234567890',
    ],
)
def test_a_bad_token_is_refused_in_one_line(tmp_path, token):
    token_file = tmp_path / "write_token"
    token_file.write_text(token)
    completed = subprocess.run(
        ["sh", str(ROOT / "proxy" / "write-token.sh"), str(token_file), str(tmp_path / "out.conf")],
        capture_output=True,
        text=True,
    )
    assert completed.returncode == 2
    assert len(completed.stderr.splitlines()) == 1
    assert token not in completed.stderr


# The image's paths a test moves under its own folder.
MOVED = ["/etc/nginx/", "/tmp/", "/run/secrets/", "/var/run/", "/var/log/nginx/"]


def moved_under(folder, prefixes, text):
    """text with each of the image's path prefixes moved to folder, in one
    pass (folder may itself be under one of them: /tmp/)."""
    pattern = "|".join(map(re.escape, prefixes))
    return re.sub(pattern, lambda _: f"{folder}/", text)


def apps_here(text, ports, nowhere):
    """text's upstream servers (the apps by their service's name, port 8000)
    on 127.0.0.1: app at ports[app], else at nowhere; without `resolve`,
    which follows a name's addresses (an address has none to follow), and
    which the host's nginx, Debian bookworm's 1.22, does not know."""

    def here(match):
        return f"server 127.0.0.1:{ports.get(match[1], nowhere)}"

    return re.sub(r"server (\w+):8000(?: resolve)?", here, text)


def nginx_test(tmp_path, main, servers, moved, upstreams=None):
    """`nginx -t` of proxy/main with proxy/servers as conf.d/default.conf
    (and proxy/upstreams, when given, as conf.d/apps.conf), the image's paths
    (`moved`: prefixes) under tmp_path, the apps' names 127.0.0.1, every
    listen on a free port of 127.0.0.1."""
    nginx()

    def here(text):
        return moved_under(tmp_path, moved, text)

    for name in (main, "api.inc", "door.conf", "door.inc", "tls.inc"):
        (tmp_path / name).write_text(here((ROOT / "proxy" / name).read_text()))
    (tmp_path / "conf.d").mkdir()
    conf = {"default.conf": servers, "apps.conf": upstreams}
    for target, name in conf.items():
        if name:
            text = apps_here(here((ROOT / "proxy" / name).read_text()), {}, 8000)
            text = re.sub(r"listen (\d+) ", lambda m: f"listen 127.0.0.1:{free_port()} ", text)
            (tmp_path / "conf.d" / target).write_text(text)
    environment = {
        **os.environ,
        "TLS_DIR": str(tmp_path / "tls"),
        "WRITE_TOKEN_FILE": str(tmp_path / "no-token"),
        "WRITE_TOKEN_CONF": str(tmp_path / "nginx" / "write-token.conf"),
        "WRITES_OPEN": "1",  # the config's validity, not the token's
    }
    subprocess.run(
        ["sh", str(ROOT / "proxy" / "tls-start.sh"), "true"],
        env=environment,
        check=True,
        capture_output=True,
    )
    return subprocess.run(
        [nginx(), "-t", "-p", str(tmp_path), "-c", main, "-e", "stderr"],
        capture_output=True,
        text=True,
    )


def test_the_kubernetes_image_config_is_valid_nginx(tmp_path):
    """proxy/Dockerfile's files, as the image holds them, pass `nginx -t`."""
    completed = nginx_test(tmp_path, "door-nginx.conf", "k8s.conf", ["/tmp/"])
    assert completed.returncode == 0, completed.stderr


def test_the_compose_tls_config_is_valid_nginx(tmp_path):
    """compose.tls.yaml's proxy: door-nginx.conf and compose-tls.conf, with
    the certificate tls-start.sh makes, pass `nginx -t`."""
    completed = nginx_test(
        tmp_path, "door-nginx.conf", "compose-tls.conf", MOVED, "compose-apps.conf"
    )
    assert completed.returncode == 0, completed.stderr


def test_every_deployed_server_is_the_door():
    """Every server block of the deployed proxies (compose, its TLS profile,
    the Kubernetes image) applies door.inc before api.inc, and their one
    main config holds door.conf's rules and the JSON access log."""
    for servers in ("compose.conf", "compose-tls.conf", "k8s.conf"):
        blocks = re.findall(
            r"^server \{\n(.*?)^\}", (ROOT / "proxy" / servers).read_text(), re.M | re.S
        )
        assert len(blocks) == 4, servers
        for block in blocks:
            includes = re.findall(r"include (?:/etc/nginx/)?(\S+);", block)
            assert includes[0] == "door.inc" and includes[-1] == "api.inc", (servers, block)
    main = (ROOT / "proxy" / "door-nginx.conf").read_text()
    for line in ("include door.conf;", "include /tmp/nginx/write-token.conf;"):
        assert line in main
    assert re.search(r"access_log /dev/stdout door;", main)


def test_the_certificate_is_made_once(tmp_path):
    """tls-start.sh on first start: a key only its owner reads, a certificate
    for localhost and 127.0.0.1; on the next start, the same pair (yours,
    once you put it there, is never replaced)."""
    environment = {
        **os.environ,
        "TLS_DIR": str(tmp_path / "tls"),
        "WRITE_TOKEN_FILE": str(tmp_path / "no-token"),
        "WRITE_TOKEN_CONF": str(tmp_path / "write-token.conf"),
        "WRITES_OPEN": "1",
    }
    start = ["sh", str(ROOT / "proxy" / "tls-start.sh"), "echo", "started"]
    first = subprocess.run(start, env=environment, capture_output=True, text=True, check=True)
    assert first.stdout == "started\n" and "self-signed" in first.stderr
    key, certificate = tmp_path / "tls" / "tls.key", tmp_path / "tls" / "tls.crt"
    assert key.stat().st_mode & 0o077 == 0
    assert certificate.stat().st_mode & 0o044 == 0o044  # curl --cacert on the host
    text = subprocess.run(
        ["openssl", "x509", "-in", str(certificate), "-noout", "-text"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "DNS:localhost" in text and "IP Address:127.0.0.1" in text
    made = certificate.read_bytes()
    second = subprocess.run(start, env=environment, capture_output=True, text=True, check=True)
    assert "self-signed" not in second.stderr and certificate.read_bytes() == made


def test_a_certificate_folder_it_cannot_write_stops_it_in_one_line(tmp_path):
    """compose.tls.yaml's proxy has no capability over another user's files:
    where it can make no certificate, tls-start.sh says so in one line and
    nginx never starts."""
    (tmp_path / "a-file").write_text("")
    environment = {
        **os.environ,
        "TLS_DIR": str(tmp_path / "a-file" / "tls"),
        "WRITE_TOKEN_FILE": str(tmp_path / "no-token"),
        "WRITE_TOKEN_CONF": str(tmp_path / "write-token.conf"),
        "WRITES_OPEN": "1",
    }
    completed = subprocess.run(
        ["sh", str(ROOT / "proxy" / "tls-start.sh"), "echo", "started"],
        env=environment,
        capture_output=True,
        text=True,
    )
    assert completed.returncode == 2 and completed.stdout == ""
    [line] = completed.stderr.splitlines()
    assert "cannot write a certificate" in line


def test_the_tls_profile_is_a_valid_compose_file():
    """compose.yaml with compose.tls.yaml, the tls profile on: the proxy-tls
    service, every file it mounts there."""
    completed = subprocess.run(
        [compose_tool("docker-compose"), "-f", "compose.yaml", "-f", "compose.tls.yaml"]
        + ["--profile", "tls", "config", "--format", "json"],
        cwd=ROOT,
        env={"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/")},
        capture_output=True,
        text=True,
    )
    assert completed.returncode == 0, completed.stderr
    service = json.loads(completed.stdout)["services"]["proxy-tls"]
    for volume in service["volumes"]:
        if volume["source"].startswith(str(ROOT / "proxy")):
            assert Path(volume["source"]).exists(), volume
    assert sorted(port["target"] for port in service["ports"]) == [8443, 8444, 8445, 8446]


@pytest.mark.slow  # starts nginx
def test_too_many_requests_at_once_is_a_json_429(tmp_path):
    """limit_conn: of 300 requests held open at once from one address (to an
    app that accepts and never answers), those past door.inc's 256 get the
    JSON 429 at once."""
    nginx()
    with socket.create_server(("127.0.0.1", 0), backlog=1024) as silent:  # never accepts
        handle, log = started(silent.getsockname()[1], tmp_path, tls=False)
        clients = []
        try:
            port = port_of(handle)
            for _ in range(300):
                client = socket.create_connection(("127.0.0.1", port), timeout=5)
                client.sendall(b"GET /films/995/ HTTP/1.1\r\nHost: x\r\n\r\n")
                clients.append(client)
            time.sleep(1)  # the refusals are answered at once; the others wait for good
            refused = []
            for client in clients:
                client.settimeout(0.01)
                try:
                    answer = client.recv(4096)
                except TimeoutError:
                    continue
                refused.append(answer)
        finally:
            for client in clients:
                client.close()
            proxy.stop(handle)
            log.close()
    assert 300 - 256 <= len(refused) <= 60, len(refused)
    for answer in refused:
        head, body = answer.split(b"\r\n\r\n", 1)
        assert head.startswith(b"HTTP/1.1 429") and b"Retry-After: 1" in head
        assert json.loads(body) == {"error": "too many requests"}


# -- compose.yaml's proxy, run here as compose runs it ------------------------


def compose_proxy(tmp_path, app_port, token=None):
    """compose.yaml's proxy service on this machine: each file it mounts at
    its target (the image's paths moved under tmp_path), its write_token
    secret (token, or none), flask:8000 this machine's app_port and the other
    apps a port where nothing listens, each published port a free one of
    127.0.0.1; then its entrypoint and command, nginx told where its prefix
    is. Returns (argv, {published target: port})."""
    completed = compose_config("--format", "json")
    assert completed.returncode == 0, completed.stderr
    service = json.loads(completed.stdout)["services"]["proxy"]

    def here(text):
        return moved_under(tmp_path, MOVED, text)

    for volume in service["volumes"]:
        target = Path(here(volume["target"]))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(here(Path(volume["source"]).read_text()))
    assert [secret["source"] for secret in service["secrets"]] == ["write_token"]
    if token:
        (tmp_path / "write_token").write_text(token + "\n")
    upstreams = tmp_path / "conf.d" / "apps.conf"
    upstreams.write_text(apps_here(upstreams.read_text(), {"flask": app_port}, free_port()))
    servers = tmp_path / "conf.d" / "default.conf"
    text = servers.read_text()
    ports = {}

    def listen(match):
        ports[int(match[1])] = free_port()
        return f"listen 127.0.0.1:{ports[int(match[1])]} "

    servers.write_text(re.sub(r"listen (\d+) ", listen, text))
    assert sorted(ports) == [p["target"] for p in service["ports"]]
    entrypoint = [here(word) for word in service["entrypoint"]]
    nginx_binary, *arguments = service["command"]
    assert nginx_binary == "nginx"
    command = [nginx(), "-p", f"{tmp_path}/", "-c", "nginx.conf", "-e", "stderr", *arguments]
    return entrypoint + command, ports


@pytest.fixture
def compose_door(app_server, tmp_path):
    """compose.yaml's proxy in front of Flask, with a write token."""
    with compose_proxy_running(tmp_path, port_of(app_server), TOKEN) as door:
        yield door


@contextlib.contextmanager
def compose_proxy_running(tmp_path, app_port, token=None):
    """compose_proxy started: yields Flask's URL through it, and its log."""
    nginx()
    argv, ports = compose_proxy(tmp_path, app_port, token)
    # Appended to: nginx's access log reopens its stdout, its error log writes to
    # the inherited stderr, and neither may write over the other.
    log = open(tmp_path / "proxy.log", "a")  # noqa: SIM115 (closed below)
    process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{ports[8001]}"
    try:
        assert wait_until(lambda: port_open(ports[8001]), timeout=10), (
            tmp_path / "proxy.log"
        ).read_text()
        yield url, tmp_path / "proxy.log"
    finally:
        children.stop(process, signal.SIGQUIT)
        log.close()


def port_open(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


class Held(Connection):
    """Each request held, unanswered, until the server's release()."""

    def request(self):
        self.server.held.append(self)


class HoldingServer(ThreadedServer):
    CONNECTION = Held

    def __init__(self):
        super().__init__()
        self.held = []

    def release(self):
        self.loop.call_soon_threadsafe(lambda: [held.write(b"200 OK") for held in self.held])


@pytest.mark.slow  # starts nginx
def test_composes_proxy_refuses_what_no_replica_can_take_at_once(tmp_path):
    """compose's proxy, as compose starts it, gives Flask's replica its
    max_conns (compose-apps.conf) and no more: past them each request is
    refused at once by nginx, the contract's 503 with Retry-After, while
    those given stay held; released, they are answered."""
    limit = replica_limits()["flask"]
    with (
        HoldingServer() as app,
        compose_proxy_running(tmp_path, port_of(app), TOKEN) as (url, log),
        ThreadPoolExecutor(limit + 3) as pool,
    ):
        given = [pool.submit(requests.get, f"{url}/films/995/", timeout=30) for _ in range(limit)]
        assert wait_until(lambda: len(app.held) == limit, timeout=10), len(app.held)
        for _ in range(3):
            started = time.monotonic()
            refused = requests.get(f"{url}/films/995/", timeout=10)
            assert time.monotonic() - started < 1.0
            assert (refused.status_code, refused.json()) == (503, {"error": OVERLOADED})
            assert refused.headers["Retry-After"] == RETRY_AFTER
        assert len(app.held) == limit and not any(answer.done() for answer in given)
        app.release()
        assert [answer.result().status_code for answer in given] == [200] * limit
    assert log.read_text().count("no live upstreams") == 3


@pytest.mark.slow  # starts nginx and Flask
def test_composes_proxy_is_the_door(compose_door, db):
    """What compose's proxy answers, as compose starts it: a write without
    the token a JSON 401 and no row, with it a 201 and its row; reads need
    none; past the write burst a JSON 429 with Retry-After; a JSON line per
    request on its stdout, naming the app that answered (the answers do not)."""
    url, output = compose_door
    before = query(db, "SELECT count(*) FROM review")
    refused = requests.post(f"{url}/reviews/", json=REVIEW, timeout=10)
    assert (refused.status_code, refused.json()) == (401, {"error": "authorization required"})
    assert query(db, "SELECT count(*) FROM review") == before
    headers = {"Authorization": f"Bearer {TOKEN}"}
    stored = requests.post(f"{url}/reviews/", json=REVIEW, headers=headers, timeout=10)
    assert stored.status_code == 201, stored.text
    assert query(db, "SELECT rating FROM review WHERE review_id = %s", stored.json()["review_id"])
    read = requests.get(f"{url}/films/995/", timeout=10)
    assert read.status_code == 200
    # Which app copy answered is the log's: no internal address in an answer.
    for answer in (refused, stored, read):
        assert "X-Upstream-Addr" not in answer.headers
    with requests.Session() as session:
        burst = [
            session.post(f"{url}/reviews/", json={"film_id": 0, "rating": 4}, headers=headers)
            for _ in range(60)
        ]
    over = [answer for answer in burst if answer.status_code == 429]
    assert over and {a.status_code for a in burst} <= {422, 429}, [a.status_code for a in burst]
    assert over[0].json() == {"error": "too many requests"} and over[0].headers["Retry-After"]

    def lines():
        return [
            json.loads(line) for line in output.read_text().splitlines() if line.startswith("{")
        ]

    assert wait_until(lambda: len(lines()) >= 63, timeout=5), output.read_text()[-2000:]
    read = next(line for line in lines() if line["request"].startswith("GET /films/995/"))
    assert read["status"] == 200 and re.fullmatch(r"127\.0\.0\.1:\d+", read["upstream"])
    assert re.fullmatch(r"[0-9a-f]{32}", read["request_id"])


# -- the harness through the door, with the stack's token ---------------------


@pytest.fixture
def token_file(tmp_path):
    path = tmp_path / "write_token"
    path.write_text(TOKEN + "\n")
    return path


@pytest.fixture
def plain_guarded(app_server, tmp_path, token_file):
    """The door with a write token in front of Flask, without TLS (the open
    loop speaks plain HTTP)."""
    handle, log = started(port_of(app_server), tmp_path, token_file, tls=False)
    yield handle.url
    proxy.stop(handle)
    log.close()


def reviews_of_995(db):
    [[count]] = query(db, "SELECT count(*) FROM review WHERE film_id = 995")
    return count


def settled_reviews_of_995(db, quiet=0.5, within=10.0):
    """The count once no write lands for `quiet` seconds: wrk stops with
    requests in flight, and the app may store one after wrk has reported."""
    count, deadline = reviews_of_995(db), time.monotonic() + within
    while time.monotonic() < deadline:
        time.sleep(quiet)
        again = reviews_of_995(db)
        if again == count:
            return count
        count = again
    raise AssertionError(f"writes to film 995 still landing after {within} s")


def test_the_harness_verifies_a_write_through_the_door_with_its_token(
    plain_guarded, db, token_file
):
    """bench/sut/verify.py: with the run's token the POST is stored, and
    verification passes; without it, the door's 401 fails it."""
    route = ROUTES["review"]
    assert verify.verify_route(plain_guarded, route, db, token_file) == []
    assert reviews_of_995(db) == 1
    problems = verify.verify_route(plain_guarded, route, db)
    assert "status 401, expected 201" in problems[0], problems
    assert reviews_of_995(db) == 1


def load(generator, url, token_file):
    """One second of writes to film 995, by wrk (lua/post.lua) or the open
    loop, with token_file's token or none: their report."""
    route = ROUTES["review"]
    if generator == "wrk":
        return wrk.run(wrk.command(url, route, 2, 1, 1, 5, token_file=token_file))
    args = openloop.command(
        url + route.path, 15, 2, 1, "POST", route.body.decode(), 5, token_file=token_file
    )
    return openloop.run(args)


@pytest.mark.parametrize("generator", ["wrk", "openloop"])
def test_the_harness_writes_through_the_door_with_its_token(
    plain_guarded, db, token_file, generator
):
    """A second of writes through the door with the run's token: 201s (and,
    from wrk's closed loop, the door's 429 past its write burst), each 201 a
    row. Without the token: every one a 401, no row."""
    allowed = load(generator, plain_guarded, token_file)
    statuses = {int(status): count for status, count in allowed["statuses"].items()}
    assert statuses[201] > 0 and set(statuses) <= {201, 429}, statuses
    stored = settled_reviews_of_995(db)
    # The open loop waits for every answer; wrk stops at its second with up to
    # one request in flight on each of its 2 connections, stored unanswered
    # (the harness's ledger counts them as in flight), perhaps after wrk's
    # report: the count is read once it has settled.
    in_flight = stored - statuses[201]
    assert in_flight == 0 if generator == "openloop" else 0 <= in_flight <= 2, in_flight
    refused = load(generator, plain_guarded, None)
    statuses = {int(status): count for status, count in refused["statuses"].items()}
    assert set(statuses) == {401}, statuses
    assert reviews_of_995(db) == stored
