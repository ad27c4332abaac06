"""Side by side with LangGraph's PostgresStore on the hard evaluation.

    .venv/bin/python benchmarks/peer_bench.py

Both on the same PostgreSQL, with the same embedding function and the same
memories: ours in one user store per tenant, LangGraph's in one namespace
per tenant (its own pgvector HNSW index over the text field). Each
question is asked of both, in alternating order, so machine noise hits
both alike; reported: the latency of each, the paired ratio (theirs / ours,
median and p95 over the questions), how many of k=10 results each returns
under its tenant filter, and recall@5 of each. Ours is memory_search in
hybrid mode, query embedding included; theirs is `store.search` with the
query, embedding included. On a throwaway database.
"""

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import command_line, percentiles, setup_django

K = 10


def main() -> None:
    command_line(__doc__).parse_args()
    setup_django()
    from django.db import connection
    from langgraph.store.postgres import PostgresStore

    from benchmarks.eval.hard import ops_set, public_set
    from benchmarks.eval.metrics import recall_at
    from benchmarks.eval.run import load_hard
    from memory_app.embeddings import document_text, get_backend
    from memory_app.selectors.search import memory_search

    ops_rows, ops_queries = ops_set()
    public_rows, public_queries = public_set()
    rows, query_rows = ops_rows + public_rows, ops_queries + public_queries
    tenants = load_hard(rows)
    connection.ensure_connection()
    backend = get_backend()
    index = {
        "dims": backend.dimensions,
        "embed": lambda texts: backend.embed(list(texts)).tolist(),
        "fields": ["text"],
    }
    with PostgresStore.from_conn_string(connection.connection.info.dsn, index=index) as store:
        store.setup()
        for row in rows:
            text = document_text(row.title, "", row.content)
            store.put((row.tenant,), row.id, {"text": text})
        ours_ms, theirs_ms, ratios = [], [], []
        counts = {"ours": [], "theirs": []}
        recalls = {"ours": [], "theirs": []}
        for number, query in enumerate(query_rows):
            actor, paths = tenants[query.tenant]

            def ours(query=query, actor=actor, paths=paths):
                hits = memory_search(actor=actor, query=query.text, limit=K)
                return [paths.get(hit.document.path, "") for hit in hits]

            def theirs(query=query):
                return [
                    item.key for item in store.search((query.tenant,), query=query.text, limit=K)
                ]

            order = (("ours", ours), ("theirs", theirs))
            timings = {}
            for name, run in order if number % 2 == 0 else reversed(order):
                started = time.perf_counter()
                found = run()
                timings[name] = (time.perf_counter() - started) * 1000
                counts[name].append(len(found))
                if query.relevant:
                    recalls[name].append(recall_at(found, query.relevant, 5))
            ours_ms.append(timings["ours"])
            theirs_ms.append(timings["theirs"])
            ratios.append(timings["theirs"] / timings["ours"])
    ratios.sort()
    print(f"{len(rows)} memories in {len(tenants)} tenants, {len(query_rows)} questions, k={K}")
    print(f"ours   (memory_search, hybrid)   {percentiles(ours_ms)}")
    print(f"theirs (PostgresStore.search)    {percentiles(theirs_ms)}")
    print(
        f"paired ratio theirs/ours: median {statistics.median(ratios):.2f}, "
        f"p95 {ratios[int(len(ratios) * 0.95)]:.2f}"
    )
    for name in ("ours", "theirs"):
        returned = counts[name]
        print(
            f"{name:<6} results per question: mean {statistics.mean(returned):.1f}, "
            f"{sum(1 for n in returned if n == K)} of {len(returned)} with all {K}; "
            f"recall@5 {statistics.mean(recalls[name]):.3f}"
        )


if __name__ == "__main__":
    main()
