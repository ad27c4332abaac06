"""The safety scan of an import's texts, as the write path scans them
(DESIGN §3: no write skips the scanner), under the rules of the store each
text goes into."""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from memory_app.hashing import sha256_text
from memory_app.safety import Finding, scan_fields
from memory_app.services.guard import agent_text_fields
from memory_app.services.import_lines import Refused
from memory_app.services.versions import SourceRef

# Scan verdicts kept for texts a file repeats (titles, hints, tags across
# versions and documents); forgotten past this many, to bound memory.
SCANS_KEPT = 50_000
# Refused texts a message names, of one line.
FINDINGS_NAMED = 10


class ImportScanner:
    """The safety scan of an import's texts, each distinct text scanned once
    per kind of store (a conversation store tolerates injection phrases)."""

    def __init__(self) -> None:
        self.seen: dict[tuple[str, bool], list[Finding]] = {}

    def prepare(self, texts: Iterable[str], *, conversation: bool) -> None:
        """Scan the texts not scanned yet, in one call: the scanner overlaps
        its engine's work on each with its own detectors on the others."""
        self._fill({sha256_text(text): text for text in texts if text}, conversation)

    def findings(self, fields: Mapping[str, str], *, conversation: bool) -> list[Finding]:
        """Every finding in `fields`, blocking or not, named by field."""
        shas = {name: sha256_text(text) for name, text in fields.items() if text}
        self._fill({sha: fields[name] for name, sha in shas.items()}, conversation)
        return [
            Finding(f.detector, name, f.start, f.end, f.blocking)
            for name, sha in shas.items()
            for f in self.seen[sha, conversation]
        ]

    def _fill(self, texts: dict[str, str], conversation: bool) -> None:
        """Scan those of `texts` (by their sha256) not scanned yet."""
        if len(self.seen) > SCANS_KEPT:
            self.seen.clear()
        unseen = {sha: text for sha, text in texts.items() if (sha, conversation) not in self.seen}
        if not unseen:
            return
        found = scan_fields(unseen, conversation_store=conversation)
        for sha in unseen:
            self.seen[sha, conversation] = [f for f in found if f.field == sha]


@dataclass
class Scanned:
    """What the scan of a document line found that is kept: each version's
    scan record and each review decision's findings (all of them tolerated)."""

    versions: list[dict]
    reviews: list[list[dict]]


def version_texts(line: dict, version: dict) -> dict[str, str]:
    """A version's texts as the write that made it scanned them."""
    metadata = version["metadata"]
    return agent_text_fields(
        path=line["path"],
        title=version["title"],
        recall_hint=version["recall_hint"],
        content=version["content"],
        tags=metadata.get("tags") or (),
        entities=metadata.get("entities") or {},
        source_refs=[SourceRef(kind, ref) for kind, ref in version["source_refs"]],
    )


def head_texts(line: dict) -> dict[str, str]:
    return agent_text_fields(
        path=line["path"],
        title=line["title"],
        recall_hint=line["recall_hint"],
        content=line["content"],
        tags=line["tags"],
        entities=line["entities"],
    )


REVIEW_TEXTS = ("target_path", "proposed_title", "proposed_content", "rationale", "decision_note")


def refuse_blocked(findings: Iterable[tuple[str, Finding]]) -> None:
    """Refuse the line when a finding blocks: named by field and detector."""
    named = sorted({f"{prefix}{f.field} ({f.detector})" for prefix, f in findings if f.blocking})
    if named:
        more = f" and {len(named) - FINDINGS_NAMED} more" if len(named) > FINDINGS_NAMED else ""
        raise Refused(f"the safety scanner refuses {', '.join(named[:FINDINGS_NAMED])}{more}")
