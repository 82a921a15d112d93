"""Half-migrated: async views, as Quart runs them on its event loop. Two
still block it; the last awaits everything, or hands it to a thread."""

import asyncio
import time

import httpx
import psycopg2
import requests
from quart import Blueprint

blueprint = Blueprint("live", __name__)
DSN = "postgresql:///shop"


@blueprint.get("/live/scores")
async def scores():
    time.sleep(0.2)
    return requests.get("https://scores.example/now", timeout=2).json()


@blueprint.get("/live/stock")
async def stock():
    connection = psycopg2.connect(DSN)
    with connection.cursor() as cursor:
        cursor.execute("SELECT sum(quantity) FROM line")
        return {"stock": cursor.fetchone()[0]}


@blueprint.get("/live/awaiting")
async def awaiting():
    await asyncio.sleep(0.2)
    async with httpx.AsyncClient() as client:
        await client.get("https://scores.example/now")
    await asyncio.to_thread(time.sleep, 0.2)

    def later():
        time.sleep(1)  # defined here, never called by the view

    return {"ok": True}
