"""Shared set-up for benchmarks: Django on a throwaway database, timing helpers.

Without DATABASE_URL each benchmark runs on its own embedded PostgreSQL in
a temporary folder (deleted afterwards), never on the development data. A
benchmark that takes long to load may offer `--data-dir` instead: the data
then stays there (server stopped, files kept) so a later run measures on it
without loading again.
"""

import argparse
import atexit
import logging
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def command_line(doc: str) -> argparse.ArgumentParser:
    """A parser whose --help prints the script's docstring: a script that
    takes no options still answers --help instead of running in full."""
    return argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )


def setup_django(data_dir: Path | None = None) -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    if not os.environ.get("DATABASE_URL"):
        folder = data_dir or Path(tempfile.mkdtemp(prefix="memory-bench-"))
        os.environ["MEMORY_DATA_DIR"] = str(folder.resolve())
    import django
    from django.conf import settings

    django.setup()
    # A benchmark prints its figures; a line per request in process would bury them.
    logging.getLogger("memory_app.requests").setLevel(logging.WARNING)
    embedded = settings.DATABASES["default"].get("EMBEDDED_DATA_DIR")
    if embedded:
        if data_dir is None:
            settings.DATABASES["default"]["EMBEDDED_CLEANUP"] = "delete"
        # Registered before the server starts, so it runs after the
        # server package's own exit hook.
        throwaway = None if data_dir else Path(os.environ["MEMORY_DATA_DIR"])
        atexit.register(_release, Path(embedded), throwaway)
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def _release(server_dir: Path, throwaway: Path | None) -> None:
    """Stop the benchmark's server, and delete a throwaway folder whole.

    The server package stops it when the last process attached to it exits,
    but a server process a benchmark started (uvicorn's workers) may die
    without detaching: its pid kept the server running after the benchmark
    ended. Dead pids are dropped here before the server is released. The
    throwaway folder also holds the broker's files and the keys, which the
    package's own cleanup leaves."""
    from django.db import connections

    from config.database.server import release_if_unused

    connections.close_all()
    release_if_unused(server_dir)
    if throwaway is not None:
        shutil.rmtree(throwaway, ignore_errors=True)


def percentiles(samples_ms: list[float]) -> str:
    ordered = sorted(samples_ms)
    q = statistics.quantiles(ordered, n=100, method="inclusive")
    return f"p50 {q[49]:.2f} ms  p95 {q[94]:.2f} ms  p99 {q[98]:.2f} ms  max {ordered[-1]:.2f} ms"


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def timed_with_cpu(fn: Callable[[], object], repeat: int) -> tuple[list[float], list[float]]:
    """Wall-clock and CPU time of each call, in ms. The CPU time is this
    process's alone (a database server's work is not in it) and leaves out
    time spent waiting for a core, so on a busy machine it moves far less
    than the wall clock does."""
    wall, cpu = [], []
    for _ in range(repeat):
        started, started_cpu = time.perf_counter(), time.process_time()
        fn()
        cpu.append((time.process_time() - started_cpu) * 1000)
        wall.append((time.perf_counter() - started) * 1000)
    return wall, cpu
