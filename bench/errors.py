"""The benchmark's errors: each says, in a sentence, why a run cannot go on.
./benchmark.sh prints that sentence and exits 1, with no traceback."""


class BenchmarkError(RuntimeError):
    """The run stops: no database, a port taken, wrk or pgbench failing..."""


class AppFailed(BenchmarkError):
    """One app is not measured (the others are); the report says why."""
