"""Verify before measuring: each measured route answers per the contract.

TechEmpower's toolset does the same before it benchmarks a framework: a fast
wrong answer is not a result. An app whose routes fail is not measured, and the
report says why.
"""

import json
import ssl
import urllib.error
import urllib.request

from bench import write_token

SELECT_REVIEW = "SELECT film_id, rating FROM review WHERE review_id = %s"


def fetch(url, body=None, token_file=None):
    """(status, content type, parsed JSON or None) of one request; a POST
    carries the door's write token when token_file names one."""
    request = urllib.request.Request(url, data=body, method="POST" if body else "GET")
    if body:
        request.add_header("Content-Type", "application/json")
        for name, value in write_token.headers(token_file).items():
            request.add_header(name, value)
    # https: only the door the run started itself (--proxy door), on 127.0.0.1,
    # with the certificate it made for itself.
    context = ssl._create_unverified_context() if url.startswith("https://127.0.0.1:") else None
    try:
        with urllib.request.urlopen(request, timeout=10, context=context) as response:
            status, headers, raw = response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        status, headers, raw = error.code, error.headers, error.read()
    try:
        document = json.loads(raw)
    except ValueError:
        document = None
    return status, headers.get("Content-Type"), document


def verify_route(url, route, connection=None, token_file=None):
    """The problems found with one route (empty: it is fit to measure).
    With a database connection, also checks that the POST's row landed; a
    POST carries the write token of token_file (bench/write_token.py)."""
    try:
        status, content_type, document = fetch(url.rstrip("/") + route.path, route.body, token_file)
    except (urllib.error.URLError, OSError) as error:
        return [f"{route.label}: no answer: {error}"]
    problems = []
    if status != route.status:
        problems.append(f"status {status}, expected {route.status}")
    if content_type != "application/json":
        problems.append(f"Content-Type {content_type!r}, expected 'application/json'")
    problems += route.check(document, route)
    if route.body and connection is not None and not problems:
        with connection.cursor() as cursor:
            cursor.execute(SELECT_REVIEW, (document["review_id"],))
            if cursor.fetchone() != (route.film_id, route.rating):
                problems.append("the review answered 201 but is not in the database")
    return [f"{route.label}: {problem}" for problem in problems]


def verify_health(url):
    """The problems found with GET /health (empty: the server is up)."""
    try:
        status, _, document = fetch(url.rstrip("/") + "/health")
    except (urllib.error.URLError, OSError) as error:
        return [f"GET /health: no answer: {error}"]
    if (status, document) != (200, {"status": "ok"}):
        return [f"GET /health: status {status}, body {document}"]
    return []
