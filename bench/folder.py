"""Each run's folder, results/<time>-<apps>/: its JSON, Markdown, charts and
logs, named after it. mkdir makes it, and mkdir is atomic: of two runs
started in the same second with the same apps, one gets the name and the
other the next free one (-2, -3...), never the same folder."""

import itertools

from bench.errors import BenchmarkError


def made(parent, name):
    """parent/name, new, this run's alone (name-2, name-3... when taken).
    Raises BenchmarkError if it cannot be made."""
    try:
        parent.mkdir(parents=True, exist_ok=True)
        for count in itertools.count(1):
            folder = parent / (name if count == 1 else f"{name}-{count}")
            try:
                folder.mkdir()
            except FileExistsError:
                continue
            return folder
    except OSError as error:
        raise BenchmarkError(f"no folder for the results in {parent}: {error.strerror}") from None
