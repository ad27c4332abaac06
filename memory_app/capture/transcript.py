"""A transcript as capture sees it: messages, spans, and drafts pointing at spans."""

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

_LINE = re.compile(r"[^\n]*(?:\n|$)")
# The role of a run sent as plain text: one message in which anyone may speak.
TRANSCRIPT_ROLE = "transcript"


@dataclass(frozen=True)
class Message:
    """One message of a run; a plain-text transcript is one message."""

    index: int
    role: str
    text: str


@dataclass(frozen=True)
class Span:
    """Characters [start, end) of one message: where a draft came from."""

    message: int
    start: int
    end: int

    def ref(self, run_id: str) -> str:
        return f"{run_id or 'transcript'}#m{self.message}:{self.start}-{self.end}"


@dataclass(frozen=True)
class Draft:
    """A memory proposed from the transcript, with the spans it rests on."""

    kind: str
    title: str
    content: str
    doc_type: str
    spans: tuple[Span, ...]


@dataclass(frozen=True)
class Skip:
    """Something capture did not keep, and why."""

    reason: str
    excerpt: str = ""
    kind: str = ""
    # Seconds until the writes may go on, when a rate stopped them.
    retry_after: int | None = None


@dataclass
class Extraction:
    drafts: list[Draft] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)


def messages_from(*, text: str | None = None, messages=None) -> list[Message]:
    """Messages from either a plain transcript or `[{"role", "content"}]`."""
    if text is not None:
        return [Message(0, TRANSCRIPT_ROLE, text)]
    return [Message(i, m["role"].lower(), m["content"]) for i, m in enumerate(messages or ())]


def lines(text: str) -> Iterator[tuple[int, str]]:
    """(offset, line without its newline) for each line of `text`."""
    for match in _LINE.finditer(text):
        if match.start() == len(text) and not match.group():
            return
        yield match.start(), match.group().rstrip("\n")
