"""Vendor and credential patterns from a maintained engine (Betterleaks).

Betterleaks carries a few hundred vendor rules (cloud keys, SaaS tokens,
connection strings, generic `api_key = …` assignments) and keeps them
current, which a hand-written list cannot; docs/decisions.md says why it
was chosen. It runs in process from a shared library, with no download at
run time. Its findings pass our placeholder filter, and a few of its rule
names are mapped to the names this API has always reported.

It runs with its default rules less `generic-password` (engine.toml,
shipped beside this module). Password assignments are ours by design
(secrets.py: env, ini, YAML, JSON, code, login calls, prose), and that
rule was most of the engine's cost on a long write: its filter reads up
to 8,192 characters either side of every candidate, so one
`password = "…"` line cost 2 to 3 ms inside a 20,000-character note and
0.1 to 0.2 ms alone. `generic-username` goes with it: it is only ever that
rule's component. The library reads the file once per process (on the
first scan, which compiles the rules either way) and keeps the compiled
rules, so the file costs nothing per scan.

The library releases the GIL while it scans, so `scan_fields` starts the
engine's call in a worker thread (`start`) and runs our detectors
meanwhile; on a second core a long write then waits for the slower of the
two, not for their sum. The threads are few and shared by the process.
"""

import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from functools import cache, lru_cache, partial
from pathlib import Path

from memory_app.safety.entropy import is_digest
from memory_app.safety.placeholders import is_placeholder, is_reference
from memory_app.safety.prefilter import line_starts
from memory_app.safety.types import Detector, Span

# Stable names for the vendors our API reported before the engine.
_ALIASES = {
    "github-pat": "github_token",
    "github-fine-grained-pat": "github_token",
    "github-oauth": "github_token",
    "github-app-token": "github_token",
    "github-refresh-token": "github_token",
    "aws-access-token": "aws_access_key_id",
    "gitlab-pat": "gitlab_token",
    "slack-bot-token": "slack_token",
    "slack-user-token": "slack_token",
    "stripe-access-token": "stripe_key",
    "gcp-api-key": "google_api_key",
    "private-key": "private_key_block",
    "jwt": "jwt",
}


CONFIG = str(Path(__file__).with_name("engine.toml"))


@cache
def _scan():
    import betterleaks

    return partial(betterleaks.scan_string, config_path=CONFIG)


def _not_a_value(value: str) -> bool:
    """A generic rule's catch that reads as a word, code or a path (chauthtok)."""
    plain_word = value.isalpha() and len(value) < 12
    return plain_word or is_reference(value)


@lru_cache(maxsize=4)
def _findings(text: str) -> tuple:
    """One engine pass per text, shared by the vendor and the generic detector."""
    return tuple(_scan()(text))


# Two threads: one scan's calls run one after another, so a second thread
# is only for a second request scanning at the same time.
_WORKERS = 2
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(_WORKERS, thread_name_prefix="safety-engine")
        return _pool


def _forget_pool() -> None:
    """A forked child has none of its parent's threads: it starts its own."""
    global _pool, _pool_lock
    _pool, _pool_lock = None, threading.Lock()


os.register_at_fork(after_in_child=_forget_pool)


def start(text: str) -> Future[tuple]:
    """The engine's findings for `text`, computed in a worker thread.

    `Future.result()` returns them, or raises what the engine raised.
    """
    return _executor().submit(_findings, text)


def spans(detector: Detector, text: str, findings: tuple) -> list[Span]:
    """`detector.find(text)` for an engine detector, from findings already made."""
    return _engine_spans(text, findings, generic=detector is GENERIC)


def _engine_spans(text: str, findings: tuple, *, generic: bool) -> list[Span]:
    found = [f for f in findings if f.rule_id.startswith("generic") == generic]
    if not found:
        return []
    starts = line_starts(text)
    spans = []
    for finding in found:
        value = finding.match.value or finding.match.full
        if not value or is_placeholder(value) or (generic and _not_a_value(value)):
            continue
        line = min(max(finding.location.start_line - 1, 0), len(starts) - 1)
        start = text.find(value, starts[line])
        if start == -1:
            start = text.find(value)
        if start == -1 or is_digest(text, start, value):
            continue
        name = _ALIASES.get(finding.rule_id, finding.rule_id.replace("-", "_"))
        spans.append(Span(name, start, start + len(value)))
    return spans


def _vendor_spans(text: str) -> list[Span]:
    return _engine_spans(text, _findings(text), generic=False)


def _generic_spans(text: str) -> list[Span]:
    return _engine_spans(text, _findings(text), generic=True)


# The engine's generic rules (`api_key = …`) run after our specific shapes,
# so an AWS key in `key=AKIA…` is reported as what it is.
VENDOR = Detector("secrets", _vendor_spans)
GENERIC = Detector("secrets", _generic_spans)
DETECTORS = (VENDOR, GENERIC)
