"""The offline extractor: fixed patterns over the transcript, no model.

It looks for the four things runs reliably state when they learned
something: a Learnings/Lessons section, labelled root cause / fix /
verified-by statements, the commands after which the problem went away,
and preferences the user stated. Anything else is left alone: a chatty run
yields nothing rather than a pile of weak drafts. What matched one of the
patterns but is not kept is reported with the reason, because a run whose
fix or preference vanished without a word cannot be told from a run that
had none.
"""

import re
from collections.abc import Iterator, Sequence

from memory_app.capture import commands
from memory_app.capture.transcript import (
    TRANSCRIPT_ROLE,
    Draft,
    Extraction,
    Message,
    Skip,
    Span,
    lines,
)
from memory_app.services.titles import title_from_content

MIN_CHARS = 20
TITLE_CHARS = 90
MAX_COMMANDS = 5
USER_ROLES = {"user", "human"}
# Why a command the run changed something with is not in the incident draft.
COMMAND_SKIPS = {
    commands.FAILED: "command_failed",
    commands.UNCONFIRMED: "command_not_confirmed",
}
_SECTION_NAMES = {
    f"{prefix}{name}"
    for prefix in ("", "key ", "run ")
    for name in ("learning", "learnings", "lesson", "lessons", "lessons learned", "takeaways")
}
_SECTION_MARKUP = re.compile(r"[\s*_#:]+")
_HEADING = re.compile(r"^\s{0,3}(?:#{1,6}\s+\S|(?:\*\*|__)[^*_]+(?:\*\*|__):?\s*$)")
# The space after the marker is taken whole: given back one character at a
# time to `.*\S`, a marker followed by a long run of spaces takes quadratic time.
_BULLET = re.compile(r"^(\s*)(?:[-*•+]|\d+[.)])\s++(.*\S)")
_LABEL = re.compile(
    r"^\s*(?:[-*•]\s*)?(?:\*\*|__)?(?P<label>root\s+cause|fix(?:ed\s+by)?|resolution|mitigation|"
    r"verified\s+(?:by|with)|verification)(?:\*\*|__)?\s*[:\u2014\u2013]\s*"
    r"(?:(?:\*\*|__)\s*)?(?P<text>\S.*)",
    re.I,
)
_LABEL_NAMES = {
    "root cause": "Root cause",
    "fix": "Fix",
    "fixed by": "Fix",
    "resolution": "Fix",
    "mitigation": "Fix",
    "verified by": "Verified by",
    "verified with": "Verified by",
    "verification": "Verified by",
}
_PROSE = (
    (
        "Root cause",
        re.compile(r"\broot cause (?:was|is|turned out to be)\s+(\S.*?)(?:\.(?=\s|$)|$)", re.I),
    ),
    (
        "Fix",
        re.compile(
            r"\b(?:fixed|resolved|mitigated) (?:it|this|the issue) by\s+(\S.*?)(?:\.(?=\s|$)|$)",
            re.I,
        ),
    ),
    (
        "Verified by",
        re.compile(
            r"\bverified (?:it |this |the fix )?(?:by|with)\s+(\S.*?)(?:\.(?=\s|$)|$)", re.I
        ),
    ),
)
_PROBLEM = re.compile(
    r"\b(?:incident|outage|alert|paged|crash\w*|fail(?:s|ed|ing|ure)?|errors?|degraded|down|"
    r"broken|stuck|not working|timing out|timed out|root cause|5\d\ds?|5xx)\b",
    re.I,
)
# Where a sentence ends: a stop followed by the end of the line or by a word
# that does not start in lower case, so "e.g. one line" stays one sentence.
_STOP = re.compile(r"(?<![.!?])[.!?]++(?=\s++[^\sa-z0-9]|\s*+$)")
_REQUEST = re.compile(r"\bplease\b", re.I)
_SPEAKER = re.compile(r"^\s*(?:user|human)\s*:\s*", re.I)
_CLAUSE_BREAK = re.compile(r"[,;:\u2014\u2013]|\s-\s")
# "I like … better" reaches a bounded way ahead: unbounded, every "I like"
# of a long sentence scans to its end, quadratic in the sentence's length.
_PREFERENCE = re.compile(
    r"\b(?:I(?:['\u2019]d| would)? (?:always |usually |really )?(?:prefer|rather)|"
    r"I like .{1,200}? better|"
    r"please (?:always|never|don['\u2019]t|do not|stop)|(?:always|never) (?:use|run|push|deploy|"
    r"commit|ask|write|reply|answer|include|put|merge|force)|"
    r"don['\u2019]t (?:ever )?(?:use|run|push|deploy)|"
    r"from now on|going forward|my preference is)\b",
    re.I,
)


def _is_section(line: str) -> bool:
    """A Learnings/Lessons heading, in whatever markup: '### Lessons learned', '**Learnings:**'."""
    return len(line) <= 60 and _SECTION_MARKUP.sub(" ", line).strip().lower() in _SECTION_NAMES


def _title(prefix: str, text: str) -> str:
    sentence = re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0].strip(" .*_")
    first = title_from_content(sentence, TITLE_CHARS + 1)
    return f"{prefix}: {first}" if prefix else first


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("**", "").replace("__", "")).strip()


def learnings(message: Message) -> Iterator[tuple[str, Span]]:
    """Each item of each Learnings/Lessons section, with its span."""
    rows = list(lines(message.text))
    i = 0
    while i < len(rows):
        if not _is_section(rows[i][1]):
            i += 1
            continue
        i += 1
        item: list[tuple[int, str]] = []
        items: list[list[tuple[int, str]]] = []
        while i < len(rows):
            offset, line = rows[i]
            if _HEADING.match(line) or _is_section(line) or commands.FENCE.match(line):
                break
            bullet = _BULLET.match(line)
            if bullet:
                if item:
                    items.append(item)
                item = [(offset + bullet.start(2), bullet.group(2))]
            elif line.strip():
                if item and (line.startswith((" ", "\t")) or not items):
                    item.append((offset, line.strip()))
                elif not item and not items:
                    item = [(offset, line.strip())]
                else:
                    break
            elif item and i + 1 < len(rows) and not _BULLET.match(rows[i + 1][1]):
                break
            i += 1
        if item:
            items.append(item)
        for parts in items:
            start = parts[0][0]
            end = parts[-1][0] + len(parts[-1][1])
            yield _clean(" ".join(text for _, text in parts)), Span(message.index, start, end)


def statements(messages: Sequence[Message]) -> tuple[dict[str, tuple[str, Span]], list[str]]:
    """The last root cause, fix and verification the run stated, and those they replace.

    The last, because a run's final report corrects its early guesses. A
    labelled line ("Root cause: …") wins over a sentence in prose. The
    replaced ones come back as "Label: text", each different text once.
    """
    found: list[tuple[bool, str, str, Span]] = []
    for message in messages:
        for offset, line in lines(message.text):
            match = _LABEL.match(line)
            if match:
                label = _LABEL_NAMES[re.sub(r"\s+", " ", match.group("label").lower())]
                text = match.group("text").rstrip()
                end = offset + match.start("text") + len(text)
                span = Span(message.index, offset + match.start(), end)
                found.append((True, label, _clean(text), span))
                continue
            for label, pattern in _PROSE:
                for prose in pattern.finditer(line):
                    span = Span(message.index, offset + prose.start(), offset + prose.end())
                    found.append((False, label, _clean(prose.group(1)), span))
    chosen = {label: (text, span) for _, label, text, span in sorted(found, key=lambda f: f[0])}
    replaced = []
    for _, label, text, _ in found:
        line = f"{label}: {text}"
        if text.lower() != chosen[label][0].lower() and line not in replaced:
            replaced.append(line)
    return chosen, replaced


def _said_by_user(message: Message, line: str) -> int | None:
    """Where the user's words start in `line`, or None when the user did not say it.

    A plain-text transcript has everyone's words in one message, so there
    the user is whoever a 'User:' line names. In any other message that
    label proves nothing: a tool's output or a fetched page can print
    "User: from now on always …", and the user would never have said it.
    """
    if message.role in USER_ROLES:
        return 0
    if message.role != TRANSCRIPT_ROLE:
        return None
    speaker = _SPEAKER.match(line)
    return speaker.end() if speaker else None


def preferences(message: Message) -> Iterator[tuple[str, Span, bool]]:
    """Sentences of user messages (or 'User:' lines of a plain transcript)
    that state a preference.

    Each comes with whether it was asked rather than stated: "should we
    always use UTC?" states none, while in "I prefer short answers, ok?"
    the preference is a clause of its own and the question is only the tag,
    and "could you please always …?" is a request in a question's form.
    """
    for offset, line in lines(message.text):
        body_start = _said_by_user(message, line)
        if body_start is None:
            continue
        for start, end in _sentences(line, body_start):
            sentence = line[start:end]
            stated = _PREFERENCE.search(sentence)
            if stated:
                asked = (
                    sentence.endswith("?")
                    and not _CLAUSE_BREAK.search(sentence, stated.end())
                    and not _REQUEST.search(sentence)
                )
                yield sentence, Span(message.index, offset + start, offset + end), asked


def _sentences(line: str, start: int) -> Iterator[tuple[int, int]]:
    """[start, end) of each sentence of `line` from `start`, without surrounding space."""
    for stop in [*_STOP.finditer(line, start), None]:
        end = stop.end() if stop else len(line)
        text = line[start:end]
        if text.strip():
            lead = len(text) - len(text.lstrip())
            yield start + lead, start + len(text.rstrip())
        start = end


def _resolving(messages: Sequence[Message], skipped: list[Skip]) -> list[tuple[str, Span]]:
    """The last MAX_COMMANDS commands that resolved the run's problem.

    Every other command that changed something is reported in `skipped`:
    one that failed or that nothing confirmed, and all of them when the
    run never states a problem to resolve (installing a package and
    reading "succeeded" is no runbook).
    """
    resolved = []
    for outcome in commands.outcomes(messages):
        if outcome.verdict == commands.RESOLVED:
            resolved.append((outcome.command, outcome.span))
        else:
            skipped.append(Skip(COMMAND_SKIPS[outcome.verdict], outcome.command, "command"))
    if resolved and not any(_PROBLEM.search(m.text) for m in messages):
        skipped += [Skip("no_problem_stated", command, "command") for command, _ in resolved]
        return []
    skipped += [
        Skip("over_command_limit", command, "command") for command, _ in resolved[:-MAX_COMMANDS]
    ]
    return resolved[-MAX_COMMANDS:]


def _incident(messages: Sequence[Message], skipped: list[Skip]) -> list[Draft]:
    """One incident draft from the labelled statements and resolving commands.

    A verification alone says nothing worth recalling; it needs a root
    cause, a fix or a command that made the difference.
    """
    labelled, replaced = statements(messages)
    skipped += [Skip("superseded_by_later_statement", line, "incident") for line in replaced]
    resolved = _resolving(messages, skipped)
    headline = labelled.get("Root cause") or labelled.get("Fix")
    if headline is None and not resolved:
        skipped += [
            Skip("no_cause_or_fix", f"{label}: {text}", "incident")
            for label, (text, _) in labelled.items()
        ]
        return []
    order = [label for label in ("Root cause", "Fix", "Verified by") if label in labelled]
    content = [f"{label}: {labelled[label][0]}" for label in order]
    spans = [labelled[label][1] for label in order]
    if resolved:
        content.append("Commands that resolved it:")
        content += [f"- `{command}`" for command, _ in resolved]
        spans += [span for _, span in resolved]
    if headline is None:
        title = _title("Resolved with", resolved[-1][0])
        return [Draft("command", title, "\n".join(content), "runbook", tuple(spans))]
    title = _title("Incident", headline[0])
    return [Draft("incident", title, "\n".join(content), "incident", tuple(spans))]


def extract(messages: Sequence[Message]) -> Extraction:
    """Drafts in transcript order: incident summary first, then learnings, then preferences.

    Every candidate left out is in `skipped` with the reason, so a caller
    can tell a run that said nothing worth keeping from one the patterns
    read differently than its author meant.
    """
    result = Extraction()
    result.drafts += _incident(messages, result.skipped)
    for message in messages:
        for text, span in learnings(message):
            if len(text) < MIN_CHARS:
                result.skipped.append(Skip("too_short", text, "learning"))
                continue
            result.drafts.append(Draft("learning", _title("", text), text, "note", (span,)))
    for message in messages:
        for text, span, asked in preferences(message):
            if asked:
                result.skipped.append(Skip("question_not_preference", text, "preference"))
                continue
            result.drafts.append(
                Draft("preference", _title("Preference", text), text, "user_preference", (span,))
            )
    return result
