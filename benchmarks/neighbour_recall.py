"""How many of the exact nearest neighbours the HNSW read finds, at scale.

    .venv/bin/python benchmarks/neighbour_recall.py --data-dir DIR
        [--documents 100000] [--queries 150] [--ef-search 40 100 200] [--stores 3 4]

Runs on a database `benchmarks/retrieval_bench.py --data-dir DIR --load-only`
loaded (the same world, agent and questions). For each question the
nearest-neighbour read is written as the scored candidate statement writes
it across many rows (the HNSW index, a store test no other index serves)
over the stores of the agent's turn, and its ten nearest are compared with
the exact ten of the same rows, every distance computed. A neighbour
within 1e-4 of the tenth exact distance counts as found, so ties among
near-duplicates are not misses. Prints the exact read's latency and, per
`hnsw.ef_search`, the share found, the mean distance lost at the tenth,
and the index read's latency. `--stores` names other store ids.
"""

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import setup_django

# memory_search's k (limit 10, fetched three times over): the index is
# asked for 32, of which the ten nearest are compared.
K = 30
TIE = 1e-4


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=150)
    parser.add_argument("--ef-search", type=int, nargs="+", default=[100])
    parser.add_argument("--stores", type=int, nargs="+", default=None)
    args = parser.parse_args()
    setup_django(args.data_dir)

    from django.db import connection

    from benchmarks.eval.dataset import TOPICS
    from benchmarks.retrieval_bench import build_world
    from memory_app.access import access_turn
    from memory_app.embeddings import embed_text, get_backend, vector_literal
    from memory_app.selectors.candidates import STORE_TEST, STORE_TEST_UNINDEXED, nearest_read

    rng = random.Random(11)
    agent, _, _ = build_world(args.documents, rng)
    stores = args.stores or list(access_turn(user=agent, external_id="conv-0").stores)
    services = ["payments", "checkout", "kafka", "search", "billing", "gateway"]
    questions = [
        rng.choice([t.paraphrase, t.exact_query]).format(svc=rng.choice(services))
        for t in (rng.choice(TOPICS) for _ in range(args.queries))
    ]
    model = get_backend().model_id
    exact_read = nearest_read(f"{STORE_TEST} AND state = 'active'", exact=True, k=K)
    indexed_read = nearest_read(f"{STORE_TEST_UNINDEXED} AND state = 'active'", exact=False, k=K)
    vectors = [vector_literal(embed_text(question)) for question in questions]
    with connection.cursor() as cursor:
        exact, samples = [], []
        for vector in vectors:
            started = time.perf_counter()
            cursor.execute(exact_read, [vector, stores, model, vector, K])
            exact.append(cursor.fetchall()[:10])
            samples.append((time.perf_counter() - started) * 1000)
        q = statistics.quantiles(samples, n=100, method="inclusive")
        print(f"{len(vectors)} questions over stores {stores}")
        print(f"every distance computed: p50 {q[49]:.2f} ms, p95 {q[94]:.2f} ms")
        print(f"{'ef_search':>9} {'found':>6} {'lost':>7} {'p50 ms':>7} {'p95 ms':>7}")
        for ef_search in args.ef_search:
            cursor.execute("SELECT set_config('hnsw.ef_search', %s, false)", [str(ef_search)])
            found, lost, samples = [], [], []
            for vector, truth in zip(vectors, exact, strict=True):
                started = time.perf_counter()
                cursor.execute(indexed_read, [vector, stores, model, vector, K])
                got = cursor.fetchall()[:10]
                samples.append((time.perf_counter() - started) * 1000)
                tenth = truth[-1][1]
                found.append(sum(1 for _, distance in got if distance <= tenth + TIE) / len(truth))
                lost.append(got[-1][1] - tenth if len(got) == len(truth) else 1.0)
            q = statistics.quantiles(samples, n=100, method="inclusive")
            print(
                f"{ef_search:>9} {statistics.fmean(found):6.3f} {statistics.fmean(lost):7.4f}"
                f" {q[49]:7.2f} {q[94]:7.2f}"
            )


if __name__ == "__main__":
    main()
