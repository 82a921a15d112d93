"""Scripts behind benchmark.sh and the tests: serving an app, measuring it."""
