"""In-process tests: the tier a Flask team writes first, and what changes in
Quart. Fixtures as in Flask's tutorial (`app`, `client`); the database is a
real Postgres (tests/conftest.py's `database_url` and `db`, an autocommit
connection to it with an empty review table). No server starts.

tests/docs/test_in_process_example.py collects these tests; in a project of your
own they are a conftest.py and a test module.
"""

import asyncio

import pytest

import flask_app
import quart_app
from common.settings import Settings
from tests.helpers import query


@pytest.fixture
def app(database_url):
    return flask_app.create_app(Settings.from_env({"DATABASE_URL": database_url}))


@pytest.fixture
def client(app):
    return app.test_client()


def test_get_film(client):
    response = client.get("/films/995/")
    assert response.status_code == 200
    assert response.get_json()["film_id"] == 995


def test_post_review_is_stored(client, db):
    response = client.post("/reviews/", json={"film_id": 995, "rating": 4})
    assert response.status_code == 201
    assert query(db, "SELECT film_id, rating FROM review") == [(995, 4)]


def test_a_review_of_no_film_stores_nothing(client, db):
    response = client.post("/reviews/", json={"film_id": 1001, "rating": 4})
    assert response.status_code == 422
    assert query(db, "SELECT * FROM review") == []


# Quart: the client is async, and the pool opens in before_serving, which
# test_app() runs (app.test_client() alone would find no pool).
def test_quart_get_film(database_url):
    app = quart_app.create_app(Settings.from_env({"DATABASE_URL": database_url}))

    async def get_film():
        async with app.test_app() as test_app:
            response = await test_app.test_client().get("/films/995/")
            return response.status_code, (await response.get_json())["film_id"]

    assert asyncio.run(get_film()) == (200, 995)
