"""common/contract.py's rules, in process: fast, no database, no server.
tests/contract/test_contract.py checks the same contract over HTTP in every app."""

import contextlib
import io
import itertools
import json
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from common import contract
from common.contract import ContractError
from tests.corpus import FRAGMENTS, filled

# The CPU time one body may cost, with a wide margin: parsing the largest body
# takes milliseconds when linear; the depth scan this bound caught took 20 s.
CPU_BOUND = 0.5


def refused(function, *args):
    """(status, message) of the ContractError function raises."""
    with pytest.raises(ContractError) as caught:
        function(*args)
    return caught.value.status, caught.value.message


@pytest.mark.parametrize(
    ("segment", "film_id"),
    [("995", 995), ("0995", 995), ("1", 1), ("2147483647", 2147483647)],
)
def test_film_ids(segment, film_id):
    assert contract.parse_film_id(segment) == film_id


@pytest.mark.parametrize(
    "segment", ["0", "-1", "2147483648", "abc", "1.5", "1e3", " 995", "\u00b2", "", "９９５"]
)
def test_film_ids_that_name_no_film(segment):
    assert refused(contract.parse_film_id, segment) == (404, contract.FILM_NOT_FOUND)


@pytest.mark.parametrize(
    ("value", "year"),
    [(None, contract.DEFAULT_YEAR), ("2010", 2010), ("-5", -5), ("02010", 2010)],
)
def test_years(value, year):
    assert contract.parse_year(value) == year


@pytest.mark.parametrize("value", ["", "abc", "2010.5", "+2010", "2147483648", "-2147483649"])
def test_bad_years(value):
    assert refused(contract.parse_year, value) == (400, contract.BAD_YEAR)


class Dribble(io.RawIOBase):
    """A stream whose read(n) returns at most `step` bytes, as a chunked one may."""

    def __init__(self, data, step):
        self.data, self.step = data, step

    def read(self, n=-1):
        chunk, self.data = self.data[: min(n, self.step)], self.data[min(n, self.step) :]
        return chunk


@pytest.mark.parametrize("step", [1, 7, contract.MAX_BODY_BYTES * 2])
def test_read_body_reads_to_the_end_of_a_short_body(step):
    assert contract.read_body(Dribble(b'{"a": 1}', step).read) == b'{"a": 1}'


def test_read_body_refuses_a_body_one_byte_past_the_limit():
    """413, having read no more than that byte: a chunked body declares no size."""
    stream = Dribble(b"x" * (3 * contract.MAX_BODY_BYTES), 1000)
    assert refused(contract.read_body, stream.read) == (413, contract.BODY_TOO_LARGE)
    assert len(stream.data) == 2 * contract.MAX_BODY_BYTES - 1


def test_read_body_takes_a_body_of_exactly_the_limit():
    body = b"x" * contract.MAX_BODY_BYTES
    assert contract.read_body(Dribble(body, 1000).read) == body


@pytest.mark.parametrize(
    ("values", "key"),
    [
        ([], None),
        (["k-1"], "k-1"),
        ([" k-1"], "k-1"),
        (["k-1  "], "k-1"),
        (["\tk-1"], "k-1"),
        (["k-1\t\t"], "k-1"),
        ([" \t k-1 \t "], "k-1"),
        (['"k-1"'], '"k-1"'),
        ([" " + "x" * contract.MAX_IDEMPOTENCY_KEY + "\t"], "x" * contract.MAX_IDEMPOTENCY_KEY),
    ],
    ids=["absent", "plain", "space", "spaces", "tab", "tabs", "both", "quoted", "longest"],
)
def test_idempotency_keys_lose_their_surrounding_whitespace(values, key):
    """RFC 9110 5.5: spaces and tabs around a field value are not part of it."""
    assert contract.parse_idempotency_key(values) == key


@pytest.mark.parametrize(
    "values",
    [
        [""],
        [" "],
        ["\t"],
        [" \t \t"],
        ["a b"],
        [" a\tb "],
        ["a,b"],
        ["a\x7f"],
        ["\u00e9"],
        ["a\n"],
        ["x" * (contract.MAX_IDEMPOTENCY_KEY + 1)],
        ["a", "a"],
    ],
    ids=[
        "empty",
        "a-space",
        "a-tab",
        "only-whitespace",
        "inner-space",
        "inner-tab",
        "comma",
        "del",
        "non-ascii",
        "newline",
        "too-long",
        "twice",
    ],
)
def test_malformed_idempotency_keys_are_400(values):
    assert refused(contract.parse_idempotency_key, values) == (400, contract.BAD_IDEMPOTENCY_KEY)


def test_a_review():
    assert contract.parse_review(b'{"film_id": 995, "rating": 4, "x": [1]}') == (995, 4)


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        (b"x" * (contract.MAX_BODY_BYTES + 1), 413, contract.BODY_TOO_LARGE),
        (b"", 400, contract.BAD_JSON),
        (b"{", 400, contract.BAD_JSON),
        (b'{"film_id": NaN, "rating": 4}', 400, contract.BAD_JSON),
        (b'{"film_id": Infinity, "rating": 4}', 400, contract.BAD_JSON),
        (b'{"film_id": 995, "rating": 4}\xff', 400, contract.BAD_JSON),
        (json.dumps({"film_id": 995, "rating": 4}).encode("utf-16"), 400, contract.BAD_JSON),
        (b"[]", 422, contract.NOT_AN_OBJECT),
        (b'"review"', 422, contract.NOT_AN_OBJECT),
        (b'{"rating": 4}', 422, contract.BAD_FILM_ID),
        (b'{"film_id": true, "rating": 4}', 422, contract.BAD_FILM_ID),
        (b'{"film_id": 995.0, "rating": 4}', 422, contract.BAD_FILM_ID),
        (b'{"film_id": "995", "rating": 4}', 422, contract.BAD_FILM_ID),
        (b'{"film_id": 995}', 422, contract.BAD_RATING),
        (b'{"film_id": 995, "rating": 4.0}', 422, contract.BAD_RATING),
        (b'{"film_id": 995, "rating": 0}', 422, contract.BAD_RATING),
        (b'{"film_id": 995, "rating": 6}', 422, contract.BAD_RATING),
        (b'{"film_id": 995, "rating": false}', 422, contract.BAD_RATING),
        (b'{"film_id": 0, "rating": 4}', 422, contract.UNKNOWN_FILM),
        (b'{"film_id": 2147483648, "rating": 4}', 422, contract.UNKNOWN_FILM),
    ],
)
def test_bad_reviews_in_the_contract_order(body, status, message):
    assert refused(contract.parse_review, body) == (status, message)


def test_the_largest_body_allowed_is_parsed():
    body = json.dumps({"film_id": 995, "rating": 4, "pad": ""}).encode()
    body = body.ljust(contract.MAX_BODY_BYTES)
    assert len(body) == contract.MAX_BODY_BYTES
    assert contract.parse_review(body) == (995, 4)


def nests_too_deep(text):
    """The depth rule read plainly, one character at a time: brackets nest,
    except inside a string (up to its unescaped closing quote, or the end)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            escaped, in_string = (False, True) if escaped else (char == "\\", char != '"')
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest > contract.MAX_JSON_DEPTH


@given(st.text(alphabet='[]{}"\\ a:,', max_size=200), st.integers(0, 40))
@settings(max_examples=300, deadline=None)
def test_the_depth_check_is_the_plain_rule(text, nesting):
    for body in (text, "[" * nesting + text, '{"a": ' * nesting + text):
        assert contract._nests_too_deep(body) == nests_too_deep(body), body


@pytest.mark.parametrize(
    ("body", "deep"),
    [
        ("[" * 32 + "]" * 32, False),
        ("[" * 33, True),
        ('["' + "[" * 40 + '"]', False),  # inside a string: not nesting
        (r'["\"' + "[" * 40, False),  # an escaped quote: the string goes on
        (r'["\\"' + "[" * 40, True),  # an escaped backslash: the quote ends it
        (r'["\\"]' + "[" * 32, False),
        ("]" * 10 + "[" * 40, False),  # not JSON, which json.loads says
    ],
)
def test_the_depth_rule(body, deep):
    assert contract._nests_too_deep(body) == nests_too_deep(body) == deep


def cpu_seconds(body):
    started = time.process_time()
    with contextlib.suppress(ContractError):
        contract.parse_review(body)
    return time.process_time() - started


def test_no_body_of_two_fragments_costs_more_than_the_bound():
    """Every pair of FRAGMENTS, repeated to the body limit."""
    costs = {a + b: cpu_seconds(filled(a + b)) for a, b in itertools.product(FRAGMENTS, repeat=2)}
    worst = max(costs, key=costs.get)
    assert costs[worst] < CPU_BOUND, (worst, costs[worst])


@given(
    prefix=st.sampled_from(["", '{"film_id": 995, "rating": 4, "c": ', '{"a": "', "[" * 32]),
    unit=st.lists(st.sampled_from(FRAGMENTS), min_size=3, max_size=8).map("".join),
)
@settings(max_examples=60, deadline=None)
def test_no_generated_body_costs_more_than_the_bound(prefix, unit):
    assert cpu_seconds(filled(unit, prefix)) < CPU_BOUND


@pytest.mark.parametrize(
    ("sqlstate", "is_unavailable"),
    [
        ("08006", True),  # connection failure
        ("08001", True),  # the client could not connect
        ("28000", True),  # login refused: pg_hba.conf, no such role
        ("28P01", True),  # wrong password
        ("3D000", True),  # no such database
        ("40P01", True),  # deadlock victim
        ("40001", True),  # serialization failure
        ("53300", True),  # too many connections
        ("55P03", True),  # lock not available
        ("57014", True),  # statement cancelled (statement_timeout)
        ("57P01", True),  # shutting down
        ("57P03", True),  # cannot connect now (starting up)
        ("58030", True),  # I/O error
        ("25006", True),  # read-only transaction: a hot standby
        ("2200H", True),  # sequence exhausted: review_id has no number left
        ("22003", False),  # numeric value out of range: class 22 is the data's, not a 503
        ("25P02", False),  # in a failed transaction: the app's bug
        ("42P01", False),  # no such table: a schema the app does not expect
        ("23505", False),  # unique violation
        ("22P02", False),  # invalid text representation
        ("54001", False),  # statement too complex (psycopg2: an OperationalError)
        (None, False),  # the driver's own: decided by its class in each app
    ],
)
def test_unavailable_by_sqlstate(sqlstate, is_unavailable):
    assert contract.unavailable(sqlstate) is is_unavailable
