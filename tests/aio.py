"""Coroutines run from synchronous tests."""

import asyncio
from concurrent.futures import ThreadPoolExecutor


def run(coroutine):
    """On a thread of its own: the browser tests' Playwright keeps an event
    loop running on the main thread, where asyncio.run refuses to start."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()
