"""Where a request's time goes between the socket and the view.

    .venv/bin/python benchmarks/http_overhead.py [--documents 1000] [--requests 300]
        [--data-dir DIR] [--py-spy FILE] [--profile FILE]
        [--server LABEL[:DIR[:UVICORN OPTIONS]] ...]

Loads a small world (the spread of retrieval_bench.py), then times the same
calls three ways, interleaved so machine noise hits all of them, each with
its wall time and its mean CPU time (for HTTP, the server's):

- `in view`: the tool's service or selector called directly;
- `in process`: through Django's whole request stack (middleware,
  authentication, throttles, DRF) by the WSGI test client, no socket;
- over HTTP: `python -m config.serve` (uvicorn, as in production, one
  worker) on the loopback, one kept-alive connection. Each `--server` is one
  more such server, of the checkout in DIR (this one by default) with
  further uvicorn options, all called in turn: `--server
  "before:../old:--http h11"` compares a previous release and uvicorn's
  pure-Python parser with this checkout.

It also counts the database sessions the server opened per request: a
server that reuses its connections opens none after the first requests.
With `--py-spy FILE` the server worker is sampled by py-spy (when
installed) while the HTTP calls run; FILE holds its collapsed stacks
(one `frame;frame;… count` line per stack, the input of any flame graph tool).
With `--profile FILE`, after the timed calls, each tool is called as many
times again in process under pyinstrument's sampler (when installed, a
development tool only) and FILE gets its call tree with wall-clock seconds.
"""

import argparse
import http.client
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import ROOT, percentiles, setup_django
from benchmarks.retrieval_bench import build_world, http_server, load


def db_sessions() -> int:
    """Sessions opened on this database since the server started."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT sessions FROM pg_stat_database WHERE datname = current_database()")
        return cursor.fetchone()[0]


def server_cpu_clock(pid: int) -> Callable[[], float]:
    """CPU seconds of the server and its worker processes, all threads.

    The kernel counts in ticks of 10 ms: one request's figure is rough, the
    mean of many is not.
    """
    import psutil

    server = psutil.Process(pid)

    def clock() -> float:
        processes = [server, *server.children(recursive=True)]
        return sum(sum(p.cpu_times()[:2]) for p in processes)

    return clock


def tool_calls(actor, queries: list[str]) -> dict[str, tuple[Callable, str, dict | None]]:
    """Each measured call: (its work in the view, HTTP path, JSON body or None for a GET).

    The work in the view includes resolving the conversation and the turn's
    stores, as every tool view does before its service.
    """
    from dataclasses import replace

    from django.test import RequestFactory

    from memory_app.access import access_turn
    from memory_app.selectors.documents import documents_list
    from memory_app.selectors.search import memory_search
    from memory_app.services.context import memory_context_load
    from memory_app.views import healthz

    def resolved():
        turn = access_turn(user=actor.user, external_id=actor.conversation.external_id)
        return replace(actor, conversation=turn.conversation, stores=turn.stores)

    cycle = iter(queries * 1000)
    return {
        "healthz": (lambda: healthz(RequestFactory().get("/healthz")), "/healthz", None),
        "memory_list": (
            lambda: documents_list(actor=resolved(), store="workspace_runbooks", limit=10),
            "/api/v1/tools/memory_list",
            {"store": "workspace_runbooks", "limit": 10},
        ),
        "memory_search": (
            lambda: memory_search(actor=resolved(), query=next(cycle)),
            "/api/v1/tools/memory_search",
            {"query": None},
        ),
        "memory_context": (
            lambda: memory_context_load(actor=resolved(), message=next(cycle)),
            "/api/v1/tools/memory_context",
            {"message": None},
        ),
    }


def body_for(template: dict, cycle) -> dict:
    return {name: next(cycle) if value is None else value for name, value in template.items()}


class Server:
    """One `config.serve` process and a kept-alive connection to it."""

    def __init__(self, label: str, port: int, root: Path, options: list[str], headers: dict):
        self.label, self.headers = label, headers
        # Kept alive while the other servers answer their share of the calls.
        options = ["--timeout-keep-alive", "120", *options]
        self.process = http_server(port, workers=1, root=root, options=options)
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.cpu = server_cpu_clock(self.process.pid)

    def call(self, path: str, body: dict | None) -> None:
        if body is None:
            self.connection.request("GET", path)
        else:
            self.connection.request("POST", path, json.dumps(body), self.headers)
        response = self.connection.getresponse()
        response.read()
        assert response.status == 200, (self.label, path, response.status)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait()


def sessions_per_request(server: Server, calls: dict, cycle, rounds: int = 10) -> float:
    before = db_sessions()
    for _ in range(rounds):
        for _view, path, body in calls.values():
            server.call(path, body_for(body, cycle) if body else None)
    time.sleep(1.5)  # the statistics reach pg_stat_database with a delay
    return (db_sessions() - before) / (rounds * len(calls))


def py_spy_start(pid: int, output: Path) -> subprocess.Popen | None:
    py_spy = shutil.which("py-spy", path=Path(sys.executable).parent) or shutil.which("py-spy")
    if py_spy is None:
        print("py-spy is not installed: no profile")
        return None
    command = [py_spy, "record", "--subprocesses", "--format", "raw", "--rate", "200"]
    spy = subprocess.Popen([*command, "--output", str(output), "--pid", str(pid)])
    time.sleep(1)
    return spy


def profile_in_process(calls: dict, call: Callable, cycle, rounds: int, output: Path) -> None:
    """Each tool's calls through Django's stack, sampled every 0.5 ms."""
    try:
        from pyinstrument import Profiler
    except ImportError:
        print("pyinstrument is not installed: no profile")
        return
    reports = []
    for name, (_view, path, template) in calls.items():
        profiler = Profiler(interval=0.0005)
        with profiler:
            for _ in range(rounds):
                call(path, body_for(template, cycle) if template else None)
        reports.append(f"# {name}, {rounds} calls\n{profiler.output_text(unicode=False)}")
    output.write_text("\n".join(reports))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--port", type=int, default=8766)
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--py-spy", type=Path, default=None)
    parser.add_argument("--profile", type=Path, default=None)
    parser.add_argument("--server", action="append", default=[], metavar="LABEL[:DIR[:OPTS]]")
    args = parser.parse_args()
    load_before = os.getloadavg()
    # Latency, not the per-key request throttle (the servers get the same rate).
    os.environ["MEMORY_API_READ_RATE"] = "1000000/minute"
    setup_django(args.data_dir)

    from django.test import Client

    from benchmarks.eval.dataset import TOPICS
    from memory_app.models import MemoryDocument
    from memory_app.services.principals import api_key_issue

    rng = random.Random(11)
    agent, actor, plan = build_world(args.documents, rng)
    if not MemoryDocument.objects.filter(created_by=agent).exists():
        print(f"loaded {args.documents} documents in {load(plan, agent, rng):.0f} s")
    queries = [rng.choice([t.paraphrase, t.exact_query]).format(svc="payments") for t in TOPICS]
    calls = tool_calls(actor, queries)
    cycle = iter(queries * 10_000)
    headers = {
        "Authorization": f"Token {api_key_issue(user=agent).raw}",
        "Content-Type": "application/json",
        "X-Memory-Conversation": "conv-0",
        "X-Memory-Run": "bench",
    }
    client = Client(headers=headers, HTTP_HOST="localhost")

    def in_process(path: str, body: dict | None) -> None:
        if body is None:
            response = client.get(path)
        else:
            response = client.post(path, json.dumps(body), content_type="application/json")
        assert response.status_code == 200, (path, response.status_code)

    servers = []
    for number, spec in enumerate(args.server or ["over HTTP"]):
        label, _, rest = spec.partition(":")
        folder, _, options = rest.partition(":")
        root = Path(folder).resolve() if folder else ROOT
        servers.append(Server(label, args.port + number, root, options.split(), headers))
    spy = None
    try:
        for _ in range(20):
            for _view, path, body in calls.values():
                in_process(path, body_for(body, cycle) if body else None)
                for server in servers:
                    server.call(path, body_for(body, cycle) if body else None)
        opened = {s.label: sessions_per_request(s, calls, cycle) for s in servers}
        if args.py_spy:
            spy = py_spy_start(servers[0].process.pid, args.py_spy)
        wall: dict[tuple[str, str], list[float]] = {}
        cpu: dict[tuple[str, str], list[float]] = {}
        for _ in range(args.requests):
            for name, (view, path, template) in calls.items():
                body = body_for(template, cycle) if template else None
                ways = [
                    ("in view", view, time.process_time),
                    ("in process", lambda p=path, b=body: in_process(p, b), time.process_time),
                ] + [(s.label, lambda s=s, p=path, b=body: s.call(p, b), s.cpu) for s in servers]
                for how, fn, clock in ways:
                    cpu_started = clock()
                    started = time.perf_counter()
                    fn()
                    wall.setdefault((name, how), []).append((time.perf_counter() - started) * 1000)
                    cpu.setdefault((name, how), []).append((clock() - cpu_started) * 1000)
        if args.profile:
            profile_in_process(calls, in_process, cycle, args.requests, args.profile)
    finally:
        if spy is not None:
            spy.send_signal(signal.SIGINT)
            spy.wait()
        for server in servers:
            server.stop()
    print(f"load average before: {load_before}")
    for key, values in wall.items():
        name, how = key
        mean_cpu = statistics.fmean(cpu[key])
        print(f"{name + ' ' + how:<28} {percentiles(values)}  CPU {mean_cpu:.2f} ms")
    for label, per_request in opened.items():
        print(f"database sessions opened per request, {label}: {per_request:.2f}")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
