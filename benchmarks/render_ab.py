"""Before and after of the render benchmark, on a machine others share.

    .venv/bin/python benchmarks/render_ab.py --before ../old-checkout [--after .]
        [--rounds 20] [--batch 10] [--pending 1000] [--versions 50]

Runs benchmarks/render_bench.py's world (its `build`) twice, once with the
code of each checkout, each in its own process on its own throwaway
database, and then renders the pages in alternating batches: a batch of
one page before, the same page after, the next page, and so on, with the
order flipped every round. Both sides therefore see the same load as it
comes and goes, which two runs one after the other do not. Prints, per
page and side, wall-clock and CPU-time percentiles over all batches and the
queries of one render. Only `build(pending, versions, rng)` and the pages'
URLs are assumed of a checkout, so any commit since the benchmark existed
can be the "before".
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

RESULT = "@@"  # marks the worker's answers among whatever else it prints


def pages(document_id, store_id, versions: int) -> list[tuple[str, str]]:
    return [
        ("queue, first page", "/queue/"),
        ("queue, page 20", "/queue/?page=20"),
        ("document, latest diff", f"/documents/{document_id}/"),
        (f"document, diff v1 to v{versions}", f"/documents/{document_id}/?from=1&to={versions}"),
        ("browser, all stores", "/browser/"),
        ("browser, one store", f"/browser/?store={store_id}"),
    ]


def worker(code: Path, pending: int, versions: int) -> None:
    """Loads the world with the code in `code`, then renders on request:
    each stdin line "<page index> <count>" is answered with the samples."""
    sys.path.insert(0, str(code))
    import random

    from benchmarks.harness import setup_django

    setup_django()
    from django.conf import settings
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from benchmarks.render_bench import build

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    reviewer, target, document = build(pending, versions, random.Random(5))
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    client = Client()
    client.force_login(reviewer)
    urls = [url for _, url in pages(document.pk, target.pk, versions)]

    def render(url: str) -> None:
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code)

    queries = []
    for url in urls:
        _timed(lambda url=url: render(url), 10)
        with CaptureQueriesContext(connection) as captured:
            render(url)
        queries.append(len(captured.captured_queries))
    _answer({"queries": queries})
    for line in sys.stdin:
        index, count = map(int, line.split())
        wall, cpu = _timed(lambda url=urls[index]: render(url), count)
        _answer({"wall": wall, "cpu": cpu})


def _timed(fn, repeat: int) -> tuple[list[float], list[float]]:
    """Wall-clock and CPU ms of each call (as harness.timed_with_cpu, which
    an older checkout may lack)."""
    wall, cpu = [], []
    for _ in range(repeat):
        started, started_cpu = time.perf_counter(), time.process_time()
        fn()
        cpu.append((time.process_time() - started_cpu) * 1000)
        wall.append((time.perf_counter() - started) * 1000)
    return wall, cpu


def _answer(payload: dict) -> None:
    print(RESULT + json.dumps(payload), flush=True)


def _read(process: subprocess.Popen) -> dict:
    for line in process.stdout:
        if line.startswith(RESULT):
            return json.loads(line[len(RESULT) :])
    raise RuntimeError("The benchmark worker stopped; its errors are above.")


def _start(code: Path, args) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, __file__, "--worker", str(code), str(args.pending), str(args.versions)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", type=Path, required=True, help="the older checkout")
    parser.add_argument("--after", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--batch", type=int, default=10)
    parser.add_argument("--pending", type=int, default=1000)
    parser.add_argument("--versions", type=int, default=50)
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from benchmarks.harness import percentiles

    sides = {"before": args.before.resolve(), "after": args.after.resolve()}
    workers = {side: _start(code, args) for side, code in sides.items()}
    queries = {side: _read(process)["queries"] for side, process in workers.items()}
    labels = [label for label, _ in pages("-", "-", args.versions)]
    samples = {(side, label): ([], []) for side in sides for label in labels}
    print(f"{args.pending} pending items, a {args.versions}-version document")
    print(f"{args.rounds} rounds of {args.batch} renders per page and side, alternating")
    print("load average before: {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))
    for number in range(args.rounds):
        order = list(sides) if number % 2 == 0 else list(reversed(sides))
        for index, label in enumerate(labels):
            for side in order:
                workers[side].stdin.write(f"{index} {args.batch}\n")
                workers[side].stdin.flush()
                answer = _read(workers[side])
                samples[side, label][0].extend(answer["wall"])
                samples[side, label][1].extend(answer["cpu"])
    print("load average after: {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))
    for process in workers.values():
        process.stdin.close()
        process.wait()
    for index, label in enumerate(labels):
        print(label)
        for side in sides:
            wall, cpu = samples[side, label]
            print(f"  {side:<7} {percentiles(wall)}")
            print(f"  {'':<7} CPU {percentiles(cpu)}")
            print(f"  {'':<7} {queries[side][index]} queries")


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--worker":
        worker(Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
    else:
        main()
