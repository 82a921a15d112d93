"""Views with a blocking call of each kind, and async ones that block nothing
but one."""

import asyncio
import sqlite3
import subprocess
import time
import urllib.request
from pathlib import Path
from time import sleep

import httpx
import psycopg2
import redis
from flask import Blueprint
from flask.views import MethodView

from . import helpers
from .helpers import label, summarise

blueprint = Blueprint("views", __name__)
cache = redis.Redis()
DSN = "postgresql:///fixture"
DATA = Path(__file__).with_name("data.txt")


@blueprint.get("/nap")
def nap():
    time.sleep(0.1)  # planted: sleep
    sleep(0.1)  # planted: sleep
    return label(" rested ")


@blueprint.route("/remote")
def remote():
    with httpx.Client(timeout=1) as client:
        client.get(helpers.URL)  # planted: http
        helpers.ask(client, helpers.URL)
    urllib.request.urlopen(helpers.URL, timeout=1)  # planted: http
    return helpers.notify("remote")


@blueprint.post("/store")
def store():
    connection = psycopg2.connect(DSN)  # planted: database
    with connection.cursor() as cursor:
        cursor.execute("INSERT INTO review (film_id, rating) VALUES (1, 5)")  # planted: database
    connection.commit()  # planted: database
    sqlite3.connect(":memory:")  # planted: database
    return {"cached": cache.get("key")}  # planted: database


@blueprint.get("/files")
def files():
    with open(DATA) as file:  # planted: file
        first = file.readline()
    return first + DATA.read_text()  # planted: file


@blueprint.get("/process")
def process():
    return subprocess.run(["true"], check=True).stdout  # planted: subprocess


@blueprint.get("/report")
def report():
    return {"count": summarise()}


@blueprint.get("/async")
async def waits():
    await asyncio.sleep(0.1)
    async with httpx.AsyncClient() as client:
        await client.get(helpers.URL)
    await asyncio.to_thread(time.sleep, 0.1)

    def later():
        time.sleep(1)  # defined here, never called by the view

    return label("waited")


@blueprint.get("/async-but-blocking")
async def blocks():
    time.sleep(0.1)  # planted: sleep
    return "blocked the loop"


def legacy():
    return helpers.notify("legacy")


class Items(MethodView):
    def get(self):
        return self.load()

    def load(self):
        return open(DATA).read()  # planted: file
