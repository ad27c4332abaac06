"""Side by side with LangGraph's PostgresStore: latency and results under tenant filters.

    .venv/bin/python benchmarks/langgraph_bench.py [--tenants 20] [--per-tenant 100]
        [--queries 200] [--k 10]

Needs the bench extra (langgraph, langgraph-checkpoint-postgres). Both stores
live in the same PostgreSQL (the benchmark's embedded server, or DATABASE_URL)
and hold the same documents with the same vectors: each tenant is one
conversation store here and one namespace there, and LangGraph's embedding
function is ours (all-MiniLM-L6-v2), so the load embeds each text once.

Each query runs against both, in alternating order, so noise from a shared
machine lands on both sides of a pair; the report gives each side's
percentiles, the median of the per-query latency ratio, and how many of the
k asked-for results each returns for a tenant alone and for a tenant with a
doc_type filter. Query embedding is inside both timings.
"""

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import percentiles, setup_django
from benchmarks.loading import bulk_load

SIDES = ("ours", "theirs", "theirs above the floor", "available")


def build_tenants(tenants: int):
    """One agent and one conversation store per tenant."""
    from memory_app.actors import Actor
    from memory_app.services.conversations import conversation_open
    from memory_app.services.principals import principal_upsert

    actors = []
    for index in range(tenants):
        agent = principal_upsert(username=f"tenant-{index}", service_account=True)
        conversation = conversation_open(user=agent, external_id=f"tenant-{index}")
        actors.append(Actor(user=agent, agent=agent, conversation=conversation))
    return actors


def conninfo() -> str:
    """The Django connection's server, as a libpq connection string."""
    from django.db import connection
    from psycopg.conninfo import make_conninfo

    params = connection.get_connection_params()
    keys = ("host", "port", "dbname", "user", "password")
    return make_conninfo(**{k: str(params[k]) for k in keys if params.get(k)})


def cached_embedder(known: dict[str, list[float]]):
    """Our embedding function for LangGraph: the documents' vectors, computed
    once for the load, are looked up; anything else (every query, each time it
    is asked, as memory_search does) is embedded."""
    from memory_app.embeddings import get_backend

    def embed(texts: list[str]) -> list[list[float]]:
        missing = [t for t in texts if t not in known]
        fresh = dict(zip(missing, get_backend().embed(missing).tolist(), strict=True))
        return [known[t] if t in known else fresh[t] for t in texts]

    return embed


def load_langgraph(store, actors) -> float:
    """Every document of every tenant into its tenant's namespace."""
    from langgraph.store.base import PutOp

    from memory_app.embeddings import document_text
    from memory_app.models import MemoryDocument

    started = time.perf_counter()
    for index, actor in enumerate(actors):
        documents = MemoryDocument.objects.filter(store=actor.conversation.store)
        store.batch(
            [
                PutOp(
                    namespace=(f"tenant-{index}", "memories"),
                    key=str(d.pk),
                    value={
                        "text": document_text(d.title, d.recall_hint, d.content),
                        "doc_type": d.doc_type,
                    },
                )
                for d in documents
            ]
        )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tenants", type=int, default=20)
    parser.add_argument("--per-tenant", type=int, default=100)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args()
    setup_django()

    from langgraph.store.postgres import PostgresStore

    from benchmarks.corpus import DOC_TYPES
    from benchmarks.eval.dataset import TOPICS
    from memory_app.embeddings import document_text, embed_text
    from memory_app.models import EMBEDDING_DIMENSIONS, MemoryDocument, Trust
    from memory_app.selectors.search import MIN_SEMANTIC, memory_search

    rng = random.Random(13)
    actors = build_tenants(args.tenants)
    placements = [
        (actor.conversation.store, Trust.AGENT_DRAFT)
        for actor in actors
        for _ in range(args.per_tenant)
    ]
    seconds = bulk_load(placements, actors[0].agent, rng)
    total = len(placements)
    print(f"loaded {total} documents here in {seconds:.1f} s ({total / seconds:.0f}/s)")
    known = {
        document_text(title, hint, content): list(map(float, vector))
        for title, hint, content, vector in MemoryDocument.objects.values_list(
            "title", "recall_hint", "content", "embedding"
        )
    }
    index = {"dims": EMBEDDING_DIMENSIONS, "embed": cached_embedder(known), "fields": ["text"]}
    with PostgresStore.from_conn_string(conninfo(), index=index) as store:
        store.setup()
        print(f"loaded the same into PostgresStore in {load_langgraph(store, actors):.1f} s")

        services = ["payments", "checkout", "kafka", "search", "billing", "gateway"]
        cases = []
        for _ in range(args.queries):
            topic = rng.choice(TOPICS)
            query = rng.choice([topic.paraphrase, topic.exact_query]).format(
                svc=rng.choice(services)
            )
            doc_type = rng.choice([None, rng.choice(DOC_TYPES)])
            cases.append((rng.randrange(args.tenants), query, doc_type))

        above_floor: list[int] = []

        def ours(tenant: int, query: str, doc_type: str | None) -> int:
            return len(
                memory_search(
                    actor=actors[tenant],
                    query=query,
                    limit=args.k,
                    doc_types=[doc_type] if doc_type else None,
                    mode="semantic",
                )
            )

        def theirs(tenant: int, query: str, doc_type: str | None) -> int:
            found = store.search(
                (f"tenant-{tenant}",),
                query=query,
                limit=args.k,
                filter={"doc_type": doc_type} if doc_type else None,
            )
            # memory_search drops vector-only matches below MIN_SEMANTIC; count
            # theirs above the same floor too, so a filter's losses show apart.
            above_floor.append(sum(1 for item in found if item.score >= MIN_SEMANTIC))
            return len(found)

        for case in cases[:10]:  # warm-up: model, plans, caches
            ours(*case), theirs(*case)
        samples = {"ours": [], "theirs": []}
        returned = {(side, bool(c[2])): [] for side in SIDES for c in cases}
        for tenant, _, doc_type in cases:
            matching = MemoryDocument.objects.filter(store=actors[tenant].conversation.store)
            if doc_type:
                matching = matching.filter(doc_type=doc_type)
            returned[("available", bool(doc_type))].append(min(args.k, matching.count()))
        for turn, case in enumerate(cases):
            order = [("ours", ours), ("theirs", theirs)]
            for side, fn in order if turn % 2 == 0 else reversed(order):
                started = time.perf_counter()
                count = fn(*case)
                samples[side].append((time.perf_counter() - started) * 1000)
                returned[(side, bool(case[2]))].append(count)
            returned[("theirs above the floor", bool(case[2]))].append(above_floor[-1])

    # The share of both sides that is the query embedding, on the same queries.
    embedding_ms = []
    for _, query, _ in cases:
        started = time.perf_counter()
        embed_text(query)
        embedding_ms.append((time.perf_counter() - started) * 1000)
    ratios = [t / o for o, t in zip(samples["ours"], samples["theirs"], strict=True)]
    print(f"{args.queries} queries over {args.tenants} tenants x {args.per_tenant} documents")
    print(f"memory_search (semantic)  {percentiles(samples['ours'])}")
    print(f"PostgresStore.search      {percentiles(samples['theirs'])}")
    print(f"query embedding alone     {percentiles(embedding_ms)}")
    print(f"paired ratio PostgresStore / ours: median {statistics.median(ratios):.2f}")
    for filtered, label in [(False, "tenant only"), (True, "tenant + doc_type")]:
        line = ", ".join(
            f"{side} {statistics.mean(returned[(side, filtered)]):.1f}" for side in SIDES
        )
        print(f"results of k={args.k}, {label}: {line}")


if __name__ == "__main__":
    main()
