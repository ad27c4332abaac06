"""Tool call latency over MCP against the same call over REST, one server.

    .venv/bin/python benchmarks/mcp_bench.py [--documents 1000] [--calls 200]

Loads N documents into one conversation store, serves config.asgi's
application (Django with /mcp) with uvicorn in a thread, and times
memory_search and memory_read through the official MCP client (streamable
HTTP, JSON answers) and through plain HTTP POSTs to /api/v1/tools/<name>,
both over a kept-alive connection from the same process. With `--streams N`,
N clients hold /api/v1/events/stream open meanwhile (the production server's
claim: open streams do not take the threads tool calls need).
"""

import argparse
import asyncio
import random
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import percentiles, setup_django
from benchmarks.loading import bulk_load

QUERIES = ["nginx ingress crash loop", "rotate the database credentials", "kafka consumer lag"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=1000)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--streams", type=int, default=0)
    args = parser.parse_args()
    setup_django()

    import httpx
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    from memory_app.models import MemoryDocument
    from memory_app.services.conversations import conversation_open
    from memory_app.services.principals import api_key_issue, principal_upsert
    from tests.live_asgi import LiveAsgiServer

    agent = principal_upsert(username="bench-agent", service_account=True)
    conversation = conversation_open(user=agent, external_id="bench-conversation")
    rng = random.Random(7)
    bulk_load([(conversation.store, "agent_draft")] * args.documents, agent, rng)
    document_id = str(MemoryDocument.objects.filter(store=conversation.store).first().pk)
    key = api_key_issue(user=agent).raw
    headers = {
        "Authorization": f"Token {key}",
        "X-Memory-Conversation": "bench-conversation",
        "X-Memory-Run": "bench-run",
    }
    calls = {
        "memory_search": lambda n: {"query": QUERIES[n % len(QUERIES)], "limit": 10},
        "memory_read": lambda n: {"id": document_id},
    }
    server = LiveAsgiServer()
    server.start()
    streams = OpenStreams(f"{server.url}/api/v1/events/stream", headers, args.streams)
    try:
        rest = {}
        with httpx.Client(headers=headers, timeout=30) as http:
            for tool, arguments in calls.items():
                url = f"{server.url}/api/v1/tools/{tool}"
                for n in range(20):  # warm-up
                    http.post(url, json=arguments(n)).raise_for_status()
                rest[tool] = []
                for n in range(args.calls):
                    started = time.perf_counter()
                    http.post(url, json=arguments(n)).raise_for_status()
                    rest[tool].append((time.perf_counter() - started) * 1000)

        async def over_mcp() -> dict[str, list[float]]:
            samples: dict[str, list[float]] = {}
            async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
                transport = streamable_http_client(f"{server.url}/mcp", http_client=http)
                async with Client(transport) as client:
                    for tool, arguments in calls.items():
                        for n in range(20):
                            assert not (await client.call_tool(tool, arguments(n))).is_error
                        samples[tool] = []
                        for n in range(args.calls):
                            started = time.perf_counter()
                            result = await client.call_tool(tool, arguments(n))
                            samples[tool].append((time.perf_counter() - started) * 1000)
                            assert not result.is_error
            return samples

        mcp = asyncio.run(over_mcp())
    finally:
        streams.close()
        server.stop()
    print(
        f"{args.documents} documents, {args.calls} calls per tool and transport, "
        f"{streams.opened} event streams open"
    )
    for tool in calls:
        print(f"{tool:14} REST {percentiles(rest[tool])}")
        print(f"{tool:14} MCP  {percentiles(mcp[tool])}")


class OpenStreams:
    """`count` SSE clients holding the event stream open, in a thread of their own."""

    def __init__(self, url: str, headers: dict, count: int) -> None:
        self.opened = 0
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = threading.Thread(target=asyncio.run, args=(self._hold(url, headers, count),))
        self._thread.start()
        self._ready.wait(timeout=60)

    async def _hold(self, url: str, headers: dict, count: int) -> None:
        import httpx

        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        limits = httpx.Limits(max_connections=count + 1)
        timeout = httpx.Timeout(30.0, read=60.0)  # keepalives come every 15 s
        async with httpx.AsyncClient(headers=headers, timeout=timeout, limits=limits) as http:

            async def one() -> None:
                async with http.stream("GET", url, headers={"Accept": "text/event-stream"}) as r:
                    self.opened += r.status_code == 200
                    async for _ in r.aiter_lines():
                        if self._stop.is_set():
                            return

            tasks = [asyncio.create_task(one()) for _ in range(count)]
            while self.opened < count and not all(t.done() for t in tasks):
                await asyncio.sleep(0.05)
            self._ready.set()
            await self._stop.wait()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    def close(self) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout=30)


if __name__ == "__main__":
    main()
