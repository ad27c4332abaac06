"""The detector registry and the scan entry point.

Bump SCANNER_VERSION whenever a rule changes: every version row stores the
scanner version that passed it, and the rescan dream job re-checks rows
scanned by an older one.
"""

from collections.abc import Mapping
from dataclasses import asdict, dataclass

from memory_app.safety import entropy, injection, logs, secrets
from memory_app.safety.normalize import normalize
from memory_app.safety.types import Detector

SCANNER_VERSION = "2026.11.1"

DETECTORS: list[Detector] = [
    *secrets.DETECTORS,
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


def _overlaps(a: Finding, b: Finding) -> bool:
    return a.field == b.field and a.start < b.end and b.start < a.end


def scan_fields(fields: Mapping[str, str], *, conversation_store: bool) -> list[Finding]:
    """Scan each named field; findings are blocking unless tolerated here.

    A span already reported by a specific rule is not reported again by the
    generic entropy rule, so a GitHub token is one finding, not two.
    """
    findings: list[Finding] = []
    for field, raw in fields.items():
        if not raw:
            continue
        text = normalize(raw)
        field_findings: list[Finding] = []
        for detector in DETECTORS:
            tolerated = detector.tolerated_in_conversations and conversation_store
            for span in detector.find(text):
                finding = Finding(span.rule, field, span.start, span.end, not tolerated)
                if detector.family == "entropy" and any(
                    _overlaps(finding, other) for other in field_findings
                ):
                    continue
                field_findings.append(finding)
        findings.extend(sorted(field_findings, key=lambda f: (f.start, f.detector)))
    return findings
