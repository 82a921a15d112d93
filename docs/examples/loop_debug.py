"""The runtime check beside tools/blocking_audit.py (docs/migration.md,
"Blocking calls"): asyncio's debug mode logs each step of the event loop
that ran longer than loop.slow_callback_duration, and names its task. For a
staging run: debug mode also records where every task and callback was
created, a cost on every request.

    .venv/bin/python -m uvicorn docs.examples.loop_debug:app --loop uvloop

PYTHONASYNCIODEBUG=1 is asyncio's own switch, but uvicorn on Python 3.11
sets the loop's debug mode off as it creates the loop (asyncio.Runner(
debug=False); from Python 3.12 it leaves it alone). So the app turns it on
itself, on the loop that serves it. tests/docs/test_loop_debug.py serves
this under uvicorn and checks the line docs/migration.md quotes.
"""

import asyncio
import time

from quart import Quart

SLOW = 0.1  # seconds: asyncio's default slow_callback_duration, said here
BLOCKED = 0.2  # seconds the blocking view holds the loop

app = Quart(__name__)


@app.before_serving
async def watch_the_loop():
    """Log (asyncio's logger, WARNING) each step of this loop longer than SLOW."""
    loop = asyncio.get_running_loop()
    loop.set_debug(True)
    loop.slow_callback_duration = SLOW


@app.get("/blocking")
async def blocking():
    """The trap: nothing else on this worker runs while it sleeps."""
    time.sleep(BLOCKED)
    return {"waited": BLOCKED}


@app.get("/health")
async def health():
    return {"status": "ok"}
