"""The detector registry and the scan entry point.

Bump SCANNER_VERSION whenever a rule changes: every version row stores the
scanner version that passed it, and the rescan dream job re-checks rows
scanned by an older one.
"""

from bisect import bisect_right
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from itertools import chain

from memory_app.safety import engine, entropy, injection, logs, secrets
from memory_app.safety.decoding import decoded_runs
from memory_app.safety.normalize import normalize
from memory_app.safety.types import Detector, Span

SCANNER_VERSION = "2026.11.6"

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


def _overlaps(a: Finding, b: Finding) -> bool:
    return a.field == b.field and a.start < b.end and b.start < a.end


def _spans(text: str) -> Iterator[tuple[Detector, Span]]:
    for detector in DETECTORS:
        for span in detector.find(text):
            yield detector, span


def _decoded_spans(text: str) -> Iterator[tuple[Detector, Span]]:
    """Hits inside encoded runs, placed on the run that hid them."""
    runs = decoded_runs(text)
    if not runs:
        return
    joined, offsets = "", []
    for run in runs:
        offsets.append(len(joined))
        joined += normalize(run.text) + "\n\n"
    for detector, span in _spans(joined):
        run = runs[bisect_right(offsets, span.start) - 1]
        yield detector, Span(span.rule, run.start, run.end)


def scan_fields(fields: Mapping[str, str], *, conversation_store: bool) -> list[Finding]:
    """Scan each named field; findings are blocking unless tolerated here.

    Each field is scanned as written (after normalisation) and once more
    with its base64, hex and percent-encoded runs decoded. A credential
    already reported by one rule is not reported again by a later, more
    generic one, so a GitHub token is one finding, not two.
    """
    findings: list[Finding] = []
    for field, raw in fields.items():
        if not raw:
            continue
        text = normalize(raw)
        field_findings: list[Finding] = []
        for detector, span in chain(_spans(text), _decoded_spans(text)):
            tolerated = detector.tolerated_in_conversations and conversation_store
            finding = Finding(span.rule, field, span.start, span.end, not tolerated)
            if finding in field_findings or (
                detector.family in _CREDENTIAL_FAMILIES
                and any(_overlaps(finding, other) for other in field_findings)
            ):
                continue
            field_findings.append(finding)
        findings.extend(sorted(field_findings, key=lambda f: (f.start, f.detector)))
    return findings
