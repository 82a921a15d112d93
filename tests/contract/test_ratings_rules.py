"""GET /films/<film_id>/ratings/'s rules, in process: fast, no server, no
database. The settings that configure it (common/settings.py), what a
source's answer must be and the route's answer made from the outcomes
(common/ratings.py), the delays the upstream is given (infra/delays.py).
tests/contract/test_ratings.py checks the same over HTTP in every app."""

import pytest

from common import contract
from common.contract import ContractError
from common.ratings import FAILED, TIMED_OUT, answer, rating_of, rating_url
from common.settings import Settings
from infra.delays import Jittered, parse_jittered

FILM = {
    "film_id": 995,
    "release_year": 2011,
    "title": "Harbor Bilko",
    "review_count": 2,
    "average_rating": 3.5,
}
A, B, C = "http://a:9001", "http://b:9002", "http://c:9003/v1"


def settings(**environ):
    return Settings.from_env({"DATABASE_URL": "postgresql://x/y", **environ})


def test_no_source_and_a_second_by_default():
    assert (settings().upstream_fanout, settings().upstream_timeout) == ((), 1.0)


@pytest.mark.parametrize(
    ("text", "urls"),
    [
        ("http://a:9001", ("http://a:9001",)),
        ("http://a:9001/, https://b", ("http://a:9001", "https://b")),
        ("  http://a:9001\n http://b:9002/v1/ ", ("http://a:9001", "http://b:9002/v1")),
        (",http://a:9001,,", ("http://a:9001",)),
        ("", ()),
    ],
)
def test_upstream_fanout_is_a_list_of_base_urls(text, urls):
    assert settings(UPSTREAM_FANOUT=text).upstream_fanout == urls


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("a:9001", "not an http(s) base URL"),
        ("ftp://a", "not an http(s) base URL"),
        ("http://", "not an http(s) base URL"),
        ("http://a:99999", "not an http(s) base URL"),
        ("http://a:x", "not an http(s) base URL"),
        ("http://a/?x=1", "no query or fragment"),
        ("http://a/#top", "no query or fragment"),
        ("http://a http://a/", "names a source twice"),
    ],
)
def test_a_bad_upstream_fanout_is_named(text, problem):
    with pytest.raises(ValueError, match="UPSTREAM_FANOUT") as refused:
        settings(UPSTREAM_FANOUT=text)
    assert problem in str(refused.value)


@pytest.mark.parametrize("text", ["0", "-1", "x", "nan", "inf", ""])
def test_upstream_timeout_is_a_number_of_seconds_above_zero(text):
    with pytest.raises(ValueError, match="UPSTREAM_TIMEOUT=.*: must be a number of seconds"):
        settings(UPSTREAM_TIMEOUT=text)
    assert settings(UPSTREAM_TIMEOUT="0.25").upstream_timeout == 0.25


def test_a_source_is_asked_under_its_base_url():
    assert rating_url(C, 995) == "http://c:9003/v1/films/995/rating"


@pytest.mark.parametrize(
    ("status", "body", "outcome"),
    [
        (200, b'{"film_id": 995, "rating": 4.25}', 4.25),
        (200, b'{"film_id": 995, "rating": 1, "extra": []}', 1),
        (200, b'{"film_id": 995, "rating": 5.0}', 5.0),
        (500, b'{"film_id": 995, "rating": 4}', FAILED),
        (404, b'{"error": "not found"}', FAILED),
        (200, b"", FAILED),
        (200, b"<html>", FAILED),
        (200, b"\xff", FAILED),
        (200, b"[4]", FAILED),
        (200, b'{"film_id": 996, "rating": 4}', FAILED),
        (200, b'{"film_id": "995", "rating": 4}', FAILED),
        (200, b'{"film_id": true, "rating": 4}', FAILED),
        (200, b'{"rating": 4}', FAILED),
        (200, b'{"film_id": 995}', FAILED),
        (200, b'{"film_id": 995, "rating": "4"}', FAILED),
        (200, b'{"film_id": 995, "rating": true}', FAILED),
        (200, b'{"film_id": 995, "rating": 0.99}', FAILED),
        (200, b'{"film_id": 995, "rating": 6}', FAILED),
        (200, b'{"film_id": 995, "rating": NaN}', FAILED),
        (200, b'{"film_id": 995, "rating": Infinity}', FAILED),
    ],
)
def test_what_a_sources_answer_must_be(status, body, outcome):
    assert rating_of(status, body, 995) == outcome


def test_the_answer_lists_every_source_in_order():
    document = answer(FILM, {A: 4.25, B: FAILED, C: TIMED_OUT})
    assert document == {
        "film_id": 995,
        "release_year": 2011,
        "title": "Harbor Bilko",
        "reviews": {"count": 2, "average": 3.5},
        "ratings": {A: 4.25, B: None, C: None},
        "unavailable": [B, C],
    }
    assert list(document["ratings"]) == [A, B, C]


def test_no_source_configured_is_an_answer_without_ratings():
    assert answer(FILM, {})["ratings"] == {} and answer(FILM, {})["unavailable"] == []


@pytest.mark.parametrize(
    ("outcomes", "status", "message"),
    [
        ({A: FAILED, B: FAILED}, 502, contract.NO_RATING_SOURCE),
        ({A: TIMED_OUT, B: TIMED_OUT}, 504, contract.NO_RATING_SOURCE_IN_TIME),
        # One timed out: what a sync app that asked A first reports, whatever
        # B would have said (it asks no source past the deadline).
        ({A: TIMED_OUT, B: FAILED}, 504, contract.NO_RATING_SOURCE_IN_TIME),
        ({A: FAILED, B: TIMED_OUT}, 504, contract.NO_RATING_SOURCE_IN_TIME),
        ({A: FAILED}, 502, contract.NO_RATING_SOURCE),
    ],
)
def test_every_source_failed(outcomes, status, message):
    with pytest.raises(ContractError) as refused:
        answer(FILM, outcomes)
    assert (refused.value.status, refused.value.message) == (status, message)


@pytest.mark.parametrize(
    ("text", "delay", "low", "high"),
    [
        ("50ms", Jittered(0.05), 0.05, 0.05),
        ("50ms~10ms", Jittered(0.05, 0.01), 0.04, 0.06),
        ("0.2s~0", Jittered(0.2), 0.2, 0.2),
        ("5~5", Jittered(0.005, 0.005), 0.0, 0.01),
        ("0", Jittered(0.0), 0.0, 0.0),
    ],
)
def test_a_delay_and_its_jitter(text, delay, low, high):
    parsed = parse_jittered(text)
    assert (parsed.mean, parsed.jitter) == pytest.approx((delay.mean, delay.jitter))
    assert (parsed.low, parsed.high) == pytest.approx((low, high))


@pytest.mark.parametrize(
    ("text", "problem"),
    [("", "not a delay"), ("50ms~", "no jitter"), ("~5ms", "not a delay"),
     ("5ms~10ms", "larger than its delay"), ("50ms~10ms~1ms", "not a delay"),
     ("-5ms", "not a delay")],
)  # fmt: skip
def test_a_bad_delay_is_named(text, problem):
    with pytest.raises(ValueError, match=problem):
        parse_jittered(text)


def test_a_delay_is_written_back_as_it_was_given():
    assert [str(parse_jittered(text)) for text in ("50ms~10ms", "0.2s", "0")] == [
        "50ms~10ms",
        "200ms",
        "0ms",
    ]
