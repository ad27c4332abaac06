"""The detector registry and the scan entry point.

Bump SCANNER_VERSION whenever a rule changes: every version row stores the
scanner version that passed it, and the rescan dream job re-checks rows
scanned by an older one.
"""

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import Future
from dataclasses import asdict, dataclass
from itertools import chain

from memory_app.safety import engine, entropy, injection, logs, secrets
from memory_app.safety.decoding import Decoded, decoded_runs
from memory_app.safety.normalize import normalize
from memory_app.safety.types import Detector, Span

SCANNER_VERSION = "2026.11.8"

# Order matters for overlaps: the engine's vendor name wins over our
# generic shapes, which win over the entropy rule.
DETECTORS: list[Detector] = [
    engine.VENDOR,
    *secrets.DETECTORS,
    engine.GENERIC,
    *entropy.DETECTORS,
    *logs.DETECTORS,
    *injection.DETECTORS,
]


@dataclass(frozen=True)
class Finding:
    """Where a rule matched; deliberately without the matched text."""

    detector: str
    field: str
    start: int
    end: int
    blocking: bool = True

    def as_dict(self) -> dict:
        return asdict(self)


_CREDENTIAL_FAMILIES = {"secrets", "entropy"}


def family_of(rule: str) -> str:
    """The family a finding's rule belongs to: secrets, logs or injection."""
    if rule.startswith("prompt_injection"):
        return "injection"
    if rule == "raw_log_dump":
        return "logs"
    return "secrets"


class _Covered:
    """The characters a field's findings cover so far, as sorted disjoint runs.

    A finding overlaps an earlier one exactly when it overlaps their union,
    so the check is a binary search, not a pass over every finding: a
    crafted write with thousands of findings (one short phrase repeated)
    took seconds to sort out when each was compared with all the others.
    """

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []

    def overlaps(self, start: int, end: int) -> bool:
        at = bisect_right(self.starts, start) - 1  # the last run starting at or before
        if at >= 0 and self.ends[at] > start:
            return True
        return at + 1 < len(self.starts) and self.starts[at + 1] < end

    def add(self, start: int, end: int) -> None:
        first = bisect_left(self.ends, start)  # the first run that ends at or after start
        last = bisect_right(self.starts, end)  # past the last run that starts at or before end
        if first < last:
            start, end = min(start, self.starts[first]), max(end, self.ends[last - 1])
        self.starts[first:last] = [start]
        self.ends[first:last] = [end]


def _spans(text: str, engine_found: Future[tuple]) -> Iterator[tuple[Detector, Span]]:
    """Every detector's spans over `text`, in `DETECTORS` order.

    Ours run first, while the engine's call on `text` (started by the
    caller) runs in its thread; the engine's spans are then put where its
    detectors stand in the order.
    """
    ours = {
        detector: detector.find(text) for detector in DETECTORS if detector not in engine.DETECTORS
    }
    found = engine_found.result()
    for detector in DETECTORS:
        spans = ours[detector] if detector in ours else engine.spans(detector, text, found)
        for span in spans:
            yield detector, span


@dataclass(frozen=True)
class _Decoded:
    """A field's encoded runs decoded, joined into one text to scan."""

    text: str
    runs: list[Decoded]
    offsets: list[int]  # where each run's text starts in `text`


def _decoded(text: str) -> _Decoded | None:
    runs = decoded_runs(text)
    if not runs:
        return None
    joined, offsets = "", []
    for run in runs:
        offsets.append(len(joined))
        joined += normalize(run.text) + "\n\n"
    return _Decoded(joined, runs, offsets)


def _decoded_spans(
    decoded: _Decoded, engine_found: Future[tuple]
) -> Iterator[tuple[Detector, Span]]:
    """Hits inside encoded runs, placed on the run that hid them."""
    for detector, span in _spans(decoded.text, engine_found):
        run = decoded.runs[bisect_right(decoded.offsets, span.start) - 1]
        yield detector, Span(span.rule, run.start, run.end)


def scan_fields(fields: Mapping[str, str], *, conversation_store: bool) -> list[Finding]:
    """Scan each named field; findings are blocking unless tolerated here.

    Each field is scanned as written (after normalisation) and once more
    with its base64, hex and percent-encoded runs decoded. A credential
    already reported by one rule is not reported again by a later, more
    generic one, so a GitHub token is one finding, not two.

    The engine's calls run in its worker thread while our detectors run
    here (engine.start); the findings and their order are those of running
    every detector in turn.
    """
    texts = {field: normalize(raw) for field, raw in fields.items() if raw}
    started: dict[str, Future[tuple]] = {}

    def engine_on(text: str) -> Future[tuple]:
        if text not in started:
            started[text] = engine.start(text)
        return started[text]

    try:
        # Every engine call is queued before our detectors run, so they overlap.
        scans = [(field, text, engine_on(text)) for field, text in texts.items()]
        decoded = {field: _decoded(text) for field, text in texts.items()}
        hidden = {field: (d, engine_on(d.text)) for field, d in decoded.items() if d is not None}
        findings: list[Finding] = []
        for field, text, engine_found in scans:
            spans = _spans(text, engine_found)
            if field in hidden:
                spans = chain(spans, _decoded_spans(*hidden[field]))
            findings.extend(_field_findings(field, spans, conversation_store=conversation_store))
        return findings
    finally:
        for future in started.values():
            future.cancel()  # only calls not yet begun: after an error in our detectors


def _field_findings(
    field: str, spans: Iterable[tuple[Detector, Span]], *, conversation_store: bool
) -> list[Finding]:
    field_findings: dict[Finding, None] = {}
    covered = _Covered()
    for detector, span in spans:
        tolerated = detector.tolerated_in_conversations and conversation_store
        finding = Finding(span.rule, field, span.start, span.end, not tolerated)
        if finding in field_findings or (
            detector.family in _CREDENTIAL_FAMILIES and covered.overlaps(span.start, span.end)
        ):
            continue
        field_findings[finding] = None
        covered.add(span.start, span.end)
    return sorted(field_findings, key=lambda f: (f.start, f.detector))


def prepare() -> None:
    """Get the native patterns ready before the first write arrives: a
    server process calls this as it starts, so no request waits for them."""
    secrets.NATIVE.prepare()
    injection.NATIVE.prepare()
