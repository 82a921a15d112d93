"""Generate the sample data (db/02-data.sql) deterministically.

The original dvdrental dump is not ours to ship, so we make data of the same
shape from a fixed seed: 1,000 films, all released after 2000, as the article's
`GET /films/` returned. The generated SQL is committed, so that Postgres' own
init directory can load it without Python; tests/contract/test_db.py checks that the
committed file equals a fresh generation.

    python -m db.generate            # rewrite db/02-data.sql
"""

import random
from pathlib import Path

DATA_SQL = Path(__file__).with_name("02-data.sql")
SEED = 20061
LAST_UPDATE = "2006-02-15 09:03:42"
FILMS = 1000
ACTORS = 200

LANGUAGES = ["English", "Italian", "Japanese", "Mandarin", "French", "German"]
CATEGORIES = [
    "Action",
    "Animation",
    "Children",
    "Classics",
    "Comedy",
    "Documentary",
    "Drama",
    "Family",
    "Foreign",
    "Games",
    "Horror",
    "Music",
    "New",
    "Sci-Fi",
    "Sports",
    "Travel",
]
ADJECTIVES = [
    "Amazing",
    "Astounding",
    "Awe-Inspiring",
    "Beautiful",
    "Boring",
    "Brilliant",
    "Touching",
    "Thoughtful",
    "Taut",
    "Stunning",
    "Insightful",
    "Intrepid",
    "Fateful",
    "Emotional",
    "Epic",
    "Fast-Paced",
    "Lacklusture",
    "Unbelieveable",
]
NOUNS = [
    "Drama",
    "Story",
    "Saga",
    "Yarn",
    "Tale",
    "Documentary",
    "Epistle",
    "Reflection",
    "Panorama",
    "Display",
    "Character Study",
    "Mystery",
]
SUBJECTS = [
    "a Dentist",
    "a Robot",
    "a Cat",
    "a Moose",
    "a Forensic Psychologist",
    "a Crocodile",
    "a Squirrel",
    "a Boat",
    "a Car",
    "a Student",
    "a Pioneer",
    "a Lumberjack",
    "a Monkey",
    "a Hunter",
    "a Composer",
    "a Teacher",
    "an Astronaut",
    "a Feminist",
    "a Mad Scientist",
    "a Womanizer",
]
VERBS = [
    "Defeat",
    "Chase",
    "Find",
    "Meet",
    "Build",
    "Outrace",
    "Overcome",
    "Sink",
    "Fight",
    "Battle",
    "Succumb",
    "Confront",
    "Kill",
    "Redeem",
]
PLACES = [
    "in Ancient China",
    "in A Jet Boat",
    "in The Canadian Rockies",
    "in A Baloon Factory",
    "in A Shark Tank",
    "in The Gulf of Mexico",
    "in A Manhattan Penthouse",
    "in Nigeria",
    "in Soviet Georgia",
    "in The Outback",
    "in A Monastery",
    "at The Moon",
]
WORDS = [
    "ACADEMY",
    "ACE",
    "ADAPTATION",
    "AFFAIR",
    "AFRICAN",
    "AGENT",
    "AIRPLANE",
    "ALADDIN",
    "ALAMO",
    "ALI",
    "ALIEN",
    "ALLEY",
    "AMADEUS",
    "AMERICAN",
    "ANACONDA",
    "ANGELS",
    "ANNIE",
    "ANONYMOUS",
    "ANTHEM",
    "APACHE",
    "APOLLO",
    "ARABIA",
    "ARMAGEDDON",
    "ARMY",
    "ATLANTIS",
    "ATTACKS",
    "BABY",
    "BACKLASH",
    "BADMAN",
    "BALLOON",
    "BANG",
    "BASIC",
    "BEACH",
    "BEAR",
    "BEAST",
    "BED",
    "BILKO",
    "BIRD",
    "BLADE",
    "BLANKET",
    "BLOOD",
    "BLUES",
    "BOILED",
    "BONNIE",
    "BOUND",
    "BRANNIGAN",
    "BRIDE",
    "BRIGHT",
    "BROTHERHOOD",
    "BUBBLE",
    "CAMPUS",
    "CANDLES",
    "CAPER",
    "CARIBBEAN",
    "CASABLANCA",
    "CHAMBER",
    "CHICAGO",
    "CIRCUS",
    "CLUB",
    "CONFIDENTIAL",
    "CROW",
    "DINOSAUR",
    "DRAGON",
    "EGG",
    "FALCON",
    "FLASK",
    "GOLDFINGER",
    "HARBOR",
    "JUNGLE",
    "MUMMY",
    "NORTH",
    "PELICAN",
    "QUART",
    "RAINBOW",
    "SANIC",
    "TITANIC",
    "WONDERLAND",
]
FIRST_NAMES = [
    "Penelope",
    "Nick",
    "Ed",
    "Jennifer",
    "Johnny",
    "Bette",
    "Grace",
    "Matthew",
    "Joe",
    "Christian",
    "Zero",
    "Karl",
    "Uma",
    "Vivien",
    "Cuba",
    "Fred",
    "Helen",
    "Dan",
    "Bob",
    "Lucille",
    "Kirsten",
    "Elvis",
    "Sandra",
]
LAST_NAMES = [
    "Guiness",
    "Wahlberg",
    "Chase",
    "Davis",
    "Lollobrigida",
    "Nicholson",
    "Mostel",
    "Johansson",
    "Swank",
    "Gable",
    "Cage",
    "Berry",
    "Wood",
    "Bergen",
    "Olivier",
    "Costner",
    "Voight",
    "Torn",
    "Fawcett",
    "Tracy",
    "Paltrow",
    "Presley",
    "Kilmer",
    "Streep",
    "Bloom",
    "Crawford",
    "Hopkins",
]
RATINGS = ["G", "PG", "PG-13", "R", "NC-17"]
FEATURES = ["Trailers", "Commentaries", "Deleted Scenes", "Behind the Scenes"]


def quote(text):
    """SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def insert(table, columns, rows):
    """One multi-row INSERT that skips rows already present."""
    values = ",\n".join("    (" + ", ".join(row) + ")" for row in rows)
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES\n{values}\nON CONFLICT DO NOTHING;\n"


def film_rows(rng):
    for film_id in range(1, FILMS + 1):
        title = f"{rng.choice(WORDS)} {rng.choice(WORDS)}".title()
        description = (
            f"A {rng.choice(ADJECTIVES)} {rng.choice(NOUNS)} of {rng.choice(SUBJECTS)} "
            f"And {rng.choice(SUBJECTS)} who must {rng.choice(VERBS)} "
            f"{rng.choice(SUBJECTS)} {rng.choice(PLACES)}"
        )
        features = sorted(rng.sample(FEATURES, rng.randint(1, 3)), key=FEATURES.index)
        yield (
            str(film_id),
            quote(title),
            quote(description),
            str(rng.randint(2001, 2012)),
            "1",
            str(rng.randint(3, 7)),
            rng.choice(["0.99", "2.99", "4.99"]),
            str(rng.randint(46, 185)),
            f"{rng.randint(9, 29)}.99",
            quote(rng.choice(RATINGS)),
            quote(LAST_UPDATE),
            quote("{" + ",".join(f'"{f}"' for f in features) + "}"),
        )


def generate(seed=SEED):
    """The whole data file as text; the same seed gives the same bytes."""
    rng = random.Random(seed)
    stamp = quote(LAST_UPDATE)
    parts = [
        "-- Generated by db/generate.py; do not edit. Regenerate with: python -m db.generate\n",
        insert(
            "language",
            ["language_id", "name", "last_update"],
            [(str(i), quote(name), stamp) for i, name in enumerate(LANGUAGES, 1)],
        ),
        insert(
            "category",
            ["category_id", "name", "last_update"],
            [(str(i), quote(name), stamp) for i, name in enumerate(CATEGORIES, 1)],
        ),
        insert(
            "actor",
            ["actor_id", "first_name", "last_name", "last_update"],
            [
                (str(i), quote(rng.choice(FIRST_NAMES)), quote(rng.choice(LAST_NAMES)), stamp)
                for i in range(1, ACTORS + 1)
            ],
        ),
        insert(
            "film",
            [
                "film_id",
                "title",
                "description",
                "release_year",
                "language_id",
                "rental_duration",
                "rental_rate",
                "length",
                "replacement_cost",
                "rating",
                "last_update",
                "special_features",
            ],
            list(film_rows(rng)),
        ),
        insert(
            "film_category",
            ["film_id", "category_id", "last_update"],
            [(str(f), str(rng.randint(1, len(CATEGORIES))), stamp) for f in range(1, FILMS + 1)],
        ),
        insert(
            "film_actor",
            ["actor_id", "film_id", "last_update"],
            [
                (str(actor), str(film), stamp)
                for film in range(1, FILMS + 1)
                for actor in sorted(rng.sample(range(1, ACTORS + 1), rng.randint(2, 8)))
            ],
        ),
    ]
    # Explicit ids above leave the serial sequences behind; move them on, and
    # never back: an id a sequence handed out (a row since deleted, such as a
    # benchmark run's film) is never handed out again.
    for table in ("language", "category", "actor", "film"):
        parts.append(
            f"SELECT setval(sequence, greatest((SELECT max({table}_id) FROM {table}), "
            f"pg_sequence_last_value(sequence)))\n"
            f"  FROM pg_get_serial_sequence('{table}', '{table}_id') AS sequence;\n"
        )
    return "".join(parts)


if __name__ == "__main__":
    DATA_SQL.write_text(generate())
    print(f"wrote {DATA_SQL}")
