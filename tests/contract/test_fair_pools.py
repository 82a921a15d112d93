"""Both PoolWrappers serve their waiters first come, first served: a
connection given back goes to the one that has waited longest, never to one
that arrives just then. On the real Postgres, one connection, five waiters
queued in a known order, and the holder asking again the moment it gives its
connection back (before any waiter could run: the surest latecomer)."""

import asyncio
import threading
import time

from common import async_pool_wrapper, pool_wrapper
from common.settings import Settings

WAITERS = 5


def settings(database_url):
    return Settings.from_env(
        # No admission budget: the waiters wait their turn, however long.
        {
            "DATABASE_URL": database_url,
            "POOL_MAX_SIZE": "1",
            "POOL_TIMEOUT": "20",
            "QUEUE_BUDGET": "0",
        }
    )


def test_the_sync_pool_serves_its_waiters_in_arrival_order(database_url):
    pool = pool_wrapper.PoolWrapper.from_settings(settings(database_url)).open()
    served, threads = [], []

    def wait(name):
        with pool.acquire():
            served.append(name)
            time.sleep(0.02)

    try:
        with pool.acquire():
            for name in range(WAITERS):
                thread = threading.Thread(target=wait, args=(name,))
                thread.start()
                threads.append(thread)
                while pool.waiting < name + 1:  # queued before the next one starts
                    time.sleep(0.001)
        wait("late")  # at once: no waiter has run since the connection came back
        for thread in threads:
            thread.join(30)
    finally:
        pool.close()
    assert served == [*range(WAITERS), "late"]


def test_the_async_pool_serves_its_waiters_in_arrival_order(database_url):
    async def scenario():
        pool = await async_pool_wrapper.PoolWrapper.from_settings(settings(database_url)).open()
        served = []

        async def wait(name):
            async with pool.acquire():
                served.append(name)
                await asyncio.sleep(0.02)

        try:
            async with pool.acquire():
                tasks = []
                for name in range(WAITERS):
                    tasks.append(asyncio.create_task(wait(name)))
                    for _ in range(5):  # the task runs until it waits for a place
                        await asyncio.sleep(0)
            await wait("late")  # at once, before a woken waiter runs
            await asyncio.wait_for(asyncio.gather(*tasks), 30)
        finally:
            await pool.close()
        return served

    assert asyncio.run(scenario()) == [*range(WAITERS), "late"]


def test_a_waiter_that_gives_up_keeps_no_place(database_url):
    """One that times out leaves the line: the next is served, nothing is lost."""
    pool = pool_wrapper.PoolWrapper(database_url, min_size=0, max_size=1, timeout=0.2).open()
    try:
        with pool.acquire():
            started = time.monotonic()
            try:
                with pool.acquire():
                    raise AssertionError("served while the only connection was held")
            except TimeoutError:
                assert 0.15 < time.monotonic() - started < 5
            assert pool.waiting == 0
        with pool.acquire():
            assert (pool.size, pool.waiting) == (1, 0)
    finally:
        pool.close()
