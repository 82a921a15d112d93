"""The in-process tests of docs/examples/in_process.py, the guide's "Testing"
section, collected here so that the guide's example runs with the suite."""

from docs.examples.in_process import (  # noqa: F401 (collected here)
    app,
    client,
    test_a_review_of_no_film_stores_nothing,
    test_get_film,
    test_post_review_is_stored,
    test_quart_get_film,
)
