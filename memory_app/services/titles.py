"""The title a memory gets when its writer leaves the title empty.

One rule for agents (memory_remember) and people (system cards, My
memories): the first non-empty line of the content, without a leading
markdown heading mark, cut at a word boundary so a list of titles never
shows half a word.
"""

import re

TITLE_FROM_CONTENT_MAX = 120
UNTITLED = "untitled"

_HEADING_MARK = re.compile(r"^#+(?:\s+|$)")
_CLOSING_MARKS = re.compile(r"\s+#+$")
_SPACES = re.compile(r"\s+")


def title_from_content(content: str, limit: int = TITLE_FROM_CONTENT_MAX) -> str:
    """'# Kafka lag\\n…' → 'Kafka lag'; a long line ends at its last whole word and '…'."""
    lines = (_heading_text(line) for line in content.splitlines())
    line = next((text for text in lines if text), "")
    if len(line) <= limit:
        return line or UNTITLED
    cut = line[: limit - 1]
    if line[limit - 1] != " " and " " in cut:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:-") + "…"


def _heading_text(line: str) -> str:
    """A line without markdown heading marks ('## Lag ##' → 'Lag'), spaces collapsed."""
    text = _CLOSING_MARKS.sub("", _HEADING_MARK.sub("", line.strip()))
    return _SPACES.sub(" ", text).strip()
