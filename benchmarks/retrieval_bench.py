"""memory_search and memory_context latency at scale.

    .venv/bin/python benchmarks/retrieval_bench.py --documents 10000 [--queries 200]
        [--explain docs/explain] [--data-dir DIR [--load-only]]

Loads N realistic documents with real embeddings (bulk path: the HNSW index
is dropped during the load and rebuilt after) spread like a real install:
30% workspace, 30% over 10 system stores (the benchmark agent may read 3),
40% over 200 conversation stores (the agent takes part in one). Then prints
p50/p95/p99 of: the query embedding alone; memory_search (over the agent's
every store, in its one conversation, and for questions about a time) and
memory_context server-side; and the same end to end over HTTP against
uvicorn on the loopback.

With `--data-dir` the loaded database is kept there and reused by the next
run, so the long 100k load can happen once (`--load-only`) and the
measurement later, on a quiet machine.
"""

import argparse
import http.client
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import ROOT, percentiles, setup_django, timed
from benchmarks.loading import bulk_load, hnsw_index_sql

TIME_PHRASES = ["last week", "yesterday", "3 days ago", "on May 2nd", "last month", "today"]


def build_world(documents: int, rng: random.Random):
    from memory_app.actors import Actor
    from memory_app.models import Trust
    from memory_app.services.conversations import conversation_open
    from memory_app.services.principals import principal_upsert, system_grant_set
    from memory_app.services.stores import store_for_system, store_workspace_ensure

    agent = principal_upsert(username="bench-agent", service_account=True, teams=["sre"])
    workspace = store_workspace_ensure(slug="workspace_runbooks", name="Runbooks")
    systems = []
    for index in range(10):
        grant = system_grant_set(
            system_slug=f"system-{index}",
            team="sre" if index < 3 else f"team-{index}",
            level="read",
        )
        systems.append(store_for_system(system=grant.system))
    conversations = []
    for index in range(200):
        owner = agent if index == 0 else principal_upsert(username=f"user-{index}")
        conversations.append(conversation_open(user=owner, external_id=f"conv-{index}").store)
    plan = []
    for _ in range(documents):
        roll = rng.random()
        if roll < 0.3:
            plan.append((workspace, Trust.ADMIN_APPROVED))
        elif roll < 0.6:
            plan.append((rng.choice(systems), Trust.USER_AUTHORED))
        else:
            plan.append((rng.choice(conversations), Trust.AGENT_DRAFT))
    actor = Actor(user=agent, agent=agent, conversation=conversations[0].conversation)
    return agent, actor, plan


def load(plan, agent, rng: random.Random) -> float:
    """Bulk path: no HNSW index during the load, one build after it."""
    from django.db import connection

    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("DROP INDEX IF EXISTS document_embedding_hnsw")
    bulk_load(plan, agent, rng, extra=lambda: {"always_inject": rng.random() < 0.0005})
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '512MB'")
        cursor.execute(hnsw_index_sql())
        cursor.execute("VACUUM ANALYZE memory_app_memorydocument")
        cursor.execute("VACUUM ANALYZE memory_app_documentterms")
    return time.perf_counter() - started


def agent_client(agent):
    """Django's test client calling the tools as the benchmark agent, in its
    conversation (build_world). Use it under `unthrottled()`."""
    from django.test import Client

    from memory_app.services.principals import api_key_issue

    return Client(
        headers={
            "Authorization": f"Token {api_key_issue(user=agent).raw}",
            "X-Memory-Conversation": "conv-0",
            "X-Memory-Run": "bench",
        }
    )


def unthrottled():
    """Settings for calls in process: no rate limit, the test client's host."""
    from django.test.utils import override_settings

    return override_settings(MEMORY_API_READ_RATE="1000000/minute", ALLOWED_HOSTS=["testserver"])


def explain(actor, query: str, folder: Path) -> None:
    """EXPLAIN (ANALYZE, BUFFERS) of a search's two candidate statements: the
    text side (prepared, so explained through EXECUTE) and the scored lists."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from memory_app.selectors.search import memory_search

    folder.mkdir(parents=True, exist_ok=True)
    with CaptureQueriesContext(connection) as captured:
        memory_search(actor=actor, query=query, limit=8)
    statements = [
        q["sql"]
        for q in captured.captured_queries
        if q["sql"].startswith(("WITH", "EXECUTE memory_text_side_"))
    ]
    sections = [f"-- query: {query}"]
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS) {statement}")
            sections.append("\n".join(row[0] for row in cursor.fetchall()))
    (folder / "candidates.txt").write_text("\n\n".join(sections) + "\n")
    print(f"wrote {folder / 'candidates.txt'}")


def http_server(
    port: int, workers: int = 2, root: Path = ROOT, options: Sequence[str] = ()
) -> subprocess.Popen:
    """uvicorn as in production: two ASGI worker processes, serving the code in
    `root`, with uvicorn's further command-line `options`."""
    # The benchmark measures latency, not the per-key request throttle.
    env = {
        **os.environ,
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "MEMORY_API_READ_RATE": "1000000/minute",
    }
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "config.serve",
            "config.asgi:application",
            "--workers",
            str(workers),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-config",
            str(root / "config" / "uvicorn-log.json"),
            *options,
        ],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(100):
        try:
            http.client.HTTPConnection("127.0.0.1", port, timeout=1).request("GET", "/healthz")
            return server
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("uvicorn did not start")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--explain", type=Path, default=None)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--load-only", action="store_true")
    args = parser.parse_args()
    setup_django(args.data_dir)

    from benchmarks.eval.dataset import TOPICS
    from memory_app.embeddings import embed_text
    from memory_app.models import MemoryDocument
    from memory_app.selectors.search import memory_search
    from memory_app.services.context import memory_context_load
    from memory_app.services.principals import api_key_issue

    rng = random.Random(11)
    agent, actor, plan = build_world(args.documents, rng)
    present = MemoryDocument.objects.filter(created_by=agent).count()
    if present >= args.documents:
        print(f"reusing {present} documents already loaded")
    elif present:
        sys.exit(f"{args.data_dir} holds {present} documents, fewer than asked: use a new folder")
    else:
        print(f"loaded {args.documents} documents in {load(plan, agent, rng):.0f} s")
    if args.load_only:
        return
    services = ["payments", "checkout", "kafka", "search", "billing", "gateway"]
    queries = [
        rng.choice([t.paraphrase, t.exact_query]).format(svc=rng.choice(services))
        for t in (rng.choice(TOPICS) for _ in range(args.queries))
    ]
    if args.explain:
        explain(actor, queries[0], args.explain)

    # Questions about a time: their memories are read by when they were
    # written (all of the benchmark's today), so most windows hold none.
    dated = [
        f"what changed in {rng.choice(services)} {rng.choice(TIME_PHRASES)}"
        for _ in range(args.queries)
    ]
    cycle = iter(queries * 100)
    dated_cycle = iter(dated * 100)
    for label, fn in [
        ("query embedding", lambda: embed_text(next(cycle))),
        ("memory_search server-side", lambda: memory_search(actor=actor, query=next(cycle))),
        (
            "  in its conversation only",
            lambda: memory_search(actor=actor, query=next(cycle), stores=["conversation"]),
        ),
        (
            "  questions about a time",
            lambda: memory_search(actor=actor, query=next(dated_cycle)),
        ),
        (
            "memory_context server-side",
            lambda: memory_context_load(actor=actor, message=next(cycle)),
        ),
    ]:
        timed(fn, 20)
        print(f"{label:<32} {percentiles(timed(fn, len(queries)))}")

    key = api_key_issue(user=agent).raw
    server = http_server(args.port)
    try:
        connection = http.client.HTTPConnection("127.0.0.1", args.port, timeout=30)
        headers = {
            "Authorization": f"Token {key}",
            "Content-Type": "application/json",
            "X-Memory-Conversation": "conv-0",
            "X-Memory-Run": "bench",
        }

        def call(tool: str, body: dict) -> None:
            connection.request("POST", f"/api/v1/tools/{tool}", json.dumps(body), headers)
            response = connection.getresponse()
            response.read()
            assert response.status == 200, response.status

        for label, tool, field, extra in [
            ("memory_search over HTTP", "memory_search", "query", {}),
            ("  in its conversation only", "memory_search", "query", {"stores": ["conversation"]}),
            ("memory_context over HTTP", "memory_context", "message", {}),
        ]:

            def one(tool=tool, field=field, extra=extra) -> None:
                call(tool, {field: next(cycle), **extra})

            timed(one, 10)
            samples = timed(one, len(queries))
            print(f"{label:<32} {percentiles(samples)}")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
