"""The knobs every app reads from the environment, with the same defaults."""

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Settings:
    database_url: str
    # 0: connect on demand, so that an app (or a restarted worker) starts even
    # while the database is down, and /health can say so with a 503.
    pool_min_size: int
    pool_max_size: int
    pool_timeout: float  # seconds to wait for a free connection, then 503
    # Seconds Postgres may take to accept a connection, and to answer one
    # statement (a locked table, a frozen server): then 503, not a hang.
    database_timeout: float
    # DATABASE_URL is a pooler in transaction mode (PgBouncer, docs/deploy.md):
    # a server connection is this client's for one transaction only, so no
    # session state may outlive one, prepared statements included.
    transaction_pooling: bool

    @classmethod
    def from_env(cls, environ=os.environ):
        """Read the settings; DATABASE_URL is required, the rest have defaults."""
        if not environ.get("DATABASE_URL"):
            raise RuntimeError("DATABASE_URL is not set")
        return cls(
            database_url=environ["DATABASE_URL"],
            pool_min_size=int(environ.get("POOL_MIN_SIZE", "0")),
            pool_max_size=int(environ.get("POOL_MAX_SIZE", "20")),
            pool_timeout=float(environ.get("POOL_TIMEOUT", "5")),
            database_timeout=float(environ.get("DATABASE_TIMEOUT", "5")),
            transaction_pooling=environ.get("TRANSACTION_POOLING", "0") == "1",
        )
