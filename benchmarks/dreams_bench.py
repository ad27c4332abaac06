"""Consolidation and compaction over a loaded store: wall time and peak memory.

    .venv/bin/python benchmarks/dreams_bench.py [--documents 10000]

Loads N generated memories with real embeddings: 40% reviewed in the
workspace runbooks, 60% drafts spread over 100 conversations (importance
1-9, so about a third qualify for consolidation). The generator repeats
symptoms and fixes across services, so the store holds many near-duplicate
clusters, as a long-lived install does. It also records usage: 200 popular
documents injected 100 times each (half of them never marked used) and
20,000 injections spread at random, a fifth of them marked used. Each job then runs through
`run_dreams --kind …` in a process of its own; the wall time (process
start included) and that process's peak RSS are printed.
"""

import argparse
import os
import random
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import ROOT, setup_django
from benchmarks.loading import bulk_load


def build(documents: int, rng: random.Random) -> None:
    from memory_app.models import Trust
    from memory_app.services.conversations import conversation_open
    from memory_app.services.principals import principal_upsert
    from memory_app.services.stores import store_workspace_ensure

    agent = principal_upsert(username="bench-agent", service_account=True)
    workspace = store_workspace_ensure(slug="workspace_runbooks", name="Runbooks")
    conversations = [
        conversation_open(user=agent, external_id=f"conv-{n}").store for n in range(100)
    ]
    plan = [
        (workspace, Trust.ADMIN_APPROVED)
        if rng.random() < 0.4
        else (rng.choice(conversations), Trust.AGENT_DRAFT)
        for _ in range(documents)
    ]
    seconds = bulk_load(plan, agent, rng)
    print(f"loaded {documents} documents in {seconds:.0f} s")
    load_usage(agent, [c.conversation for c in conversations], rng)


def load_usage(agent, conversations, rng: random.Random) -> None:
    from memory_app.models import MemoryDocument, MemoryUsage

    ids = list(MemoryDocument.objects.values_list("pk", flat=True))
    popular = rng.sample(ids, min(200, len(ids)))
    ignored = set(popular[:100])
    picks = [pk for pk in popular for _ in range(100)] + rng.choices(ids, k=20_000)
    MemoryUsage.objects.bulk_create(
        (
            MemoryUsage(
                run_id=f"run-{rng.randrange(2000)}",
                conversation=rng.choice(conversations),
                principal=agent,
                document_id=pk,
                version=1,
                rank=1,
                score=0.5,
                block="untrusted",
                tokens=40,
                hit=pk not in ignored and rng.random() < 0.2,
            )
            for pk in picks
        ),
        batch_size=2000,
    )
    print(f"recorded {len(picks)} injections")


# The child reports its own high-water mark: VmHWM belongs to the memory
# map made at exec, whereas ru_maxrss would also count this loader's memory
# at fork time.
CHILD = """
import sys, django
django.setup()
from django.core.management import call_command
call_command("run_dreams", "--kind", sys.argv[1])
hwm = next(l for l in open("/proc/self/status") if l.startswith("VmHWM"))
print("peak", int(hwm.split()[1]) // 1024)
"""


def run_job(kind: str) -> None:
    """One run in a child process, as the worker would run it."""
    started = time.perf_counter()
    child = subprocess.run(
        [sys.executable, "-c", CHILD, kind],
        cwd=ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"},
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    if child.returncode != 0:
        sys.exit(f"{kind} failed:\n{child.stderr[-2000:]}")
    lines = child.stdout.splitlines()
    peak = next(line.split()[1] for line in lines if line.startswith("peak"))
    summary = next(line for line in lines if line.startswith(kind))
    print(f"{kind:<12} wall {wall:6.1f} s  peak RSS {peak:>5} MiB  {summary}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=10_000)
    args = parser.parse_args()
    setup_django()
    build(args.documents, random.Random(7))
    for kind in ("consolidate", "compact", "contradictions", "usage"):
        run_job(kind)


if __name__ == "__main__":
    main()
