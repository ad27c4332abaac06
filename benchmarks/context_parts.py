"""Where a memory_context call spends its time, part by part.

    .venv/bin/python benchmarks/context_parts.py --data-dir DIR [--documents 100000]
        [--queries 300] [--tool memory_context|memory_search]

Runs on a database `benchmarks/retrieval_bench.py --data-dir DIR --load-only`
loaded (the same world, agent and questions), calling the tool through the
whole Django stack in this process (the test client, key authentication,
throttling, the view) so every part of the server's work is in the total.
Each part is timed by wrapping the function that does it; the parts are
nested where the code nests them (the text statement runs inside the
candidate gathering), and what no part covers is the view, serialising and
middleware. Prints p50/p95 per part and of the whole call.

`--against-plain` interleaves, in blocks of ten questions, calls whose
scored candidate statement runs prepared (as shipped) with calls that send
the same statement's text unprepared, and prints both: machine noise then
hits the two alike.
"""

import argparse
import gc
import json
import random
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import setup_django

# (module, function, label): each is replaced by a timed wrapper in its module.
PARTS = [
    ("memory_app.api.context", "access_turn", "turn: identity, conversation, stores"),
    ("memory_app.selectors.search", "gather", "candidates: both statements"),
    ("memory_app.selectors.candidates", "_text_side", "  text statement + query embedding"),
    ("memory_app.services.context", "build_context", "context built"),
    ("memory_app.selectors.context", "rerank", "re-ranking"),
    ("memory_app.selectors.search", "rerank", "re-ranking"),
    ("memory_app.selectors.context", "_fit", "token budget (rendering, counting)"),
    ("memory_app.services.context", "context_audit_write", "audit statement"),
]
GC_LABELS = [f"garbage collection, generation {n}" for n in range(3)]


def wrap(samples: dict, module_name: str, name: str, label: str) -> None:
    import importlib

    module = importlib.import_module(module_name)
    original = getattr(module, name)

    def timed_part(*args, **kwargs):
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            samples[label][-1] += (time.perf_counter() - started) * 1000

    setattr(module, name, timed_part)


def time_collections(samples: dict) -> None:
    """Add the time the interpreter's garbage collector runs, by generation, to
    the current call's samples: a collection can fall into any part."""
    started = [0.0]

    def callback(phase: str, info: dict) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
            return
        label = GC_LABELS[info["generation"]]
        if samples[label]:
            samples[label][-1] += (time.perf_counter() - started[0]) * 1000

    gc.callbacks.append(callback)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument(
        "--tool", choices=["memory_context", "memory_search"], default="memory_context"
    )
    parser.add_argument("--against-plain", action="store_true")
    args = parser.parse_args()
    setup_django(args.data_dir)

    from benchmarks.eval.dataset import TOPICS
    from benchmarks.retrieval_bench import agent_client, build_world, unthrottled

    rng = random.Random(11)
    agent, _, _ = build_world(args.documents, rng)
    services = ["payments", "checkout", "kafka", "search", "billing", "gateway"]
    questions = [
        rng.choice([t.paraphrase, t.exact_query]).format(svc=rng.choice(services))
        for t in (rng.choice(TOPICS) for _ in range(args.queries))
    ]
    client = agent_client(agent)
    field = "message" if args.tool == "memory_context" else "query"

    samples: dict[str, list[float]] = defaultdict(list)
    for module_name, name, label in PARTS:
        wrap(samples, module_name, name, label)
    time_collections(samples)
    labels = [*dict.fromkeys(label for _, _, label in PARTS), *GC_LABELS]
    plain = plain_switch()

    def call(question: str) -> None:
        for label in labels:
            samples[label].append(0.0)
        started = time.perf_counter()
        response = client.post(
            f"/api/v1/tools/{args.tool}",
            json.dumps({field: question}),
            content_type="application/json",
        )
        elapsed = (time.perf_counter() - started) * 1000
        assert response.status_code == 200, response.content
        if plain["on"]:
            # The parts are those of the calls as shipped only.
            for label in labels:
                samples[label].pop()
            samples["whole call, scored statement plain"].append(elapsed)
        else:
            samples["whole call"].append(elapsed)

    with unthrottled():
        for question in questions[:20]:
            call(question)
        samples.clear()
        for start in range(0, len(questions), 10):
            variants = [False, True] if args.against_plain else [False]
            for plain["on"] in variants if start % 20 else variants[::-1]:
                for question in questions[start : start + 10]:
                    call(question)

    print(f"{args.tool}, {len(questions)} calls in process, ms")
    print(f"{'part':<42} {'p50':>7} {'p95':>7} {'mean':>7}")
    for label in [*labels, "whole call", "whole call, scored statement plain"]:
        values = sorted(samples[label])
        if len(values) < 2:
            continue
        q = statistics.quantiles(values, n=100, method="inclusive")
        print(f"{label:<42} {q[49]:7.2f} {q[94]:7.2f} {statistics.fmean(values):7.2f}")


def plain_switch() -> dict:
    """While `on`, the scored candidate statement runs as plain text."""
    from memory_app.selectors import candidates

    switch = {"on": False}
    prepared = candidates.execute_prepared

    def either(cursor, statement, params, meanwhile=None):
        if switch["on"] and statement.name.startswith("memory_scored_"):
            cursor.execute(statement.sql, params)
            return None
        return prepared(cursor, statement, params, meanwhile)

    candidates.execute_prepared = either
    return switch


if __name__ == "__main__":
    main()
