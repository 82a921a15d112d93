"""Functions the views call: blocking ones the audit reaches through them."""

import time

import httpx
import requests

from .db import acquire

URL = "http://127.0.0.1:9/"


def summarise():
    time.sleep(0.1)  # planted: sleep
    with acquire() as connection:  # planted: database
        return count(connection)


def count(connection):
    return connection.fetchval("SELECT count(*) FROM review")  # planted: database


def notify(message):
    return requests.post(URL, json={"message": message}, timeout=1)  # planted: http


def ask(client: httpx.Client, url):
    """A client handed in, as an app keeps one per worker: its type says it blocks."""
    return client.get(url)  # planted: http


def warm_cache():
    """No view calls it: not reported."""
    time.sleep(1)


def label(text):
    """Called by views, blocks nothing."""
    return text.strip().title()
