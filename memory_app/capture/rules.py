"""The offline extractor: fixed patterns over the transcript, no model.

It looks for the four things runs reliably state when they learned
something: a Learnings/Lessons section, labelled root cause / fix /
verified-by statements, the commands after which the problem went away,
and preferences the user stated. Anything else is left alone: a chatty run
yields nothing rather than a pile of weak drafts.
"""

import re
from collections.abc import Iterator, Sequence

from memory_app.capture.transcript import Draft, Extraction, Message, Skip, Span
from memory_app.services.titles import title_from_content

MIN_CHARS = 20
TITLE_CHARS = 90
MAX_COMMANDS = 5
USER_ROLES = {"user", "human"}

_LINE = re.compile(r"[^\n]*(?:\n|$)")
_SECTION_NAMES = {
    f"{prefix}{name}"
    for prefix in ("", "key ", "run ")
    for name in ("learning", "learnings", "lesson", "lessons", "lessons learned", "takeaways")
}
_SECTION_MARKUP = re.compile(r"[\s*_#:]+")
_HEADING = re.compile(r"^\s{0,3}(?:#{1,6}\s+\S|(?:\*\*|__)[^*_]+(?:\*\*|__):?\s*$)")
_BULLET = re.compile(r"^(\s*)(?:[-*•+]|\d+[.)])\s+(.*\S)")
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
_FENCE = re.compile(r"^\s*```\s*([\w-]*)\s*$")
_SHELL_FENCES = {"", "sh", "bash", "shell", "console", "zsh"}
_PROMPT = re.compile(r"^\s*\$\s+(\S.*)")
_READ_ONLY = re.compile(
    r"^(?:sudo\s+)?(?:"
    r"kubectl(?:\s+(?:-n|--namespace|--context)\s+\S+|\s+--?\S+)*\s+"
    r"(?:get|describe|logs|top|explain)|"
    r"helm\s+(?:status|list|get|history)|docker\s+(?:ps|logs|inspect)|systemctl\s+status|"
    r"git\s+(?:log|status|diff|show)|"
    r"cat|ls|grep|rg|tail|head|less|echo|ps|df|du|free|journalctl|dig|nslookup|ping|which"
    r")\b"
)
_RESOLVED = re.compile(
    r"\b(?:resolved|fixed|recovered|healthy|back to normal|is working|works now|succeed(?:s|ed)?|"
    r"all green|error rate (?:is )?back|alert (?:has )?cleared)\b",
    re.I,
)
_FAILED = re.compile(
    r"\b(?:error(?!\s+rate)|failed|failure|still (?:failing|broken|down|crash\w*)|denied|"
    r"crashloop\w*|not found|timed out)\b",
    re.I,
)
_INCIDENT = re.compile(
    r"\b(?:incident|outage|alert|paged|crash\w*|failing|degraded|root cause|5\d\d errors?)\b",
    re.I,
)
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
_PREFERENCE = re.compile(
    r"\b(?:I(?:'d| would)? (?:always |usually |really )?(?:prefer|rather)|I like .+ better|"
    r"please (?:always|never|don't|do not|stop)|(?:always|never) (?:use|run|push|deploy|commit|"
    r"ask|write|reply|answer|include|put|merge|force)|don't (?:ever )?(?:use|run|push|deploy)|"
    r"from now on|going forward|my preference is)\b",
    re.I,
)


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """(offset, line without its newline) for each line of `text`."""
    for match in _LINE.finditer(text):
        if match.start() == len(text) and not match.group():
            return
        yield match.start(), match.group().rstrip("\n")


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
    lines = list(_lines(message.text))
    i = 0
    while i < len(lines):
        if not _is_section(lines[i][1]):
            i += 1
            continue
        i += 1
        item: list[tuple[int, str]] = []
        items: list[list[tuple[int, str]]] = []
        while i < len(lines):
            offset, line = lines[i]
            if _HEADING.match(line) or _is_section(line) or _FENCE.match(line):
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
            elif item and i + 1 < len(lines) and not _BULLET.match(lines[i + 1][1]):
                break
            i += 1
        if item:
            items.append(item)
        for parts in items:
            start = parts[0][0]
            end = parts[-1][0] + len(parts[-1][1])
            yield _clean(" ".join(text for _, text in parts)), Span(message.index, start, end)


def statements(messages: Sequence[Message]) -> dict[str, tuple[str, Span]]:
    """The last root cause, fix and verification the run stated.

    The last, because a run's final report corrects its early guesses. A
    labelled line ("Root cause: …") wins over a sentence in prose.
    """
    labelled: dict[str, tuple[str, Span]] = {}
    prose: dict[str, tuple[str, Span]] = {}
    for message in messages:
        for offset, line in _lines(message.text):
            match = _LABEL.match(line)
            if match:
                label = _LABEL_NAMES[re.sub(r"\s+", " ", match.group("label").lower())]
                text = match.group("text").rstrip()
                end = offset + match.start("text") + len(text)
                labelled[label] = (_clean(text), Span(message.index, offset + match.start(), end))
                continue
            for label, pattern in _PROSE:
                for found in pattern.finditer(line):
                    span = Span(message.index, offset + found.start(), offset + found.end())
                    prose[label] = (_clean(found.group(1)), span)
    return {**prose, **labelled}


def _commands(message: Message) -> Iterator[tuple[str, int, int]]:
    """(command, start, end) for shell prompts and lines of shell code blocks."""
    fence = None
    for offset, line in _lines(message.text):
        opening = _FENCE.match(line)
        if opening:
            fence = None if fence is not None else opening.group(1).lower()
            continue
        prompt = _PROMPT.match(line)
        if prompt:
            command = prompt.group(1).rstrip()
            yield command, offset + prompt.start(1), offset + prompt.start(1) + len(command)
        elif fence in _SHELL_FENCES and fence != "console" and line.strip():
            yield line.strip(), offset, offset + len(line)


def resolving_commands(messages: Sequence[Message]) -> list[tuple[str, Span]]:
    """Changing commands followed by a sign of recovery and no sign of failure.

    The evidence is the text after the command up to the next command,
    looking at most two messages ahead (a tool result, then the agent's
    comment on it).
    """
    found = [
        (command, message.index, start, end)
        for message in messages
        for command, start, end in _commands(message)
    ]
    resolved = []
    for n, (command, index, start, end) in enumerate(found):
        if _READ_ONLY.match(command):
            continue
        following = found[n + 1] if n + 1 < len(found) else None
        window = []
        for message in messages[index : index + 3]:
            text = message.text[end:] if message.index == index else message.text
            if following and following[1] == message.index:
                stop = following[2] - (end if message.index == index else 0)
                window.append(text[: max(stop, 0)])
                break
            window.append(text)
        evidence = "\n".join(window)
        if _RESOLVED.search(evidence) and not _FAILED.search(evidence):
            resolved.append((command, Span(index, start, end)))
    return resolved[-MAX_COMMANDS:]


def preferences(message: Message) -> Iterator[tuple[str, Span]]:
    """Sentences of user messages (or 'User:' lines) that state a preference.

    A question ("should we always squash?") states none.
    """
    for offset, line in _lines(message.text):
        body_start = 0
        if message.role not in USER_ROLES:
            speaker = re.match(r"^\s*(?:user|human)\s*:\s*", line, re.I)
            if not speaker:
                continue
            body_start = speaker.end()
        for sentence in _SENTENCE.finditer(line, body_start):
            if _PREFERENCE.search(sentence.group()) and not sentence.group().rstrip().endswith("?"):
                text = sentence.group().strip()
                start = (
                    offset
                    + sentence.start()
                    + (len(sentence.group()) - len(sentence.group().lstrip()))
                )
                yield text, Span(message.index, start, start + len(text))


def _incident(messages: Sequence[Message]) -> list[Draft]:
    """One incident draft from the labelled statements and resolving commands.

    A verification alone says nothing worth recalling; it needs a root
    cause, a fix or a command that made the difference.
    """
    labelled = statements(messages)
    commands = resolving_commands(messages)
    if not any(_INCIDENT.search(m.text) for m in messages):
        commands = []
    headline = labelled.get("Root cause") or labelled.get("Fix")
    if headline is None and not commands:
        return []
    order = [label for label in ("Root cause", "Fix", "Verified by") if label in labelled]
    lines = [f"{label}: {labelled[label][0]}" for label in order]
    spans = [labelled[label][1] for label in order]
    if commands:
        lines.append("Commands that resolved it:")
        lines += [f"- `{command}`" for command, _ in commands]
        spans += [span for _, span in commands]
    if headline is None:
        title = _title("Resolved with", commands[-1][0])
        return [Draft("command", title, "\n".join(lines), "runbook", tuple(spans))]
    title = _title("Incident", headline[0])
    return [Draft("incident", title, "\n".join(lines), "incident", tuple(spans))]


def extract(messages: Sequence[Message]) -> Extraction:
    """Drafts in transcript order: incident summary first, then learnings, then preferences."""
    result = Extraction()
    result.drafts += _incident(messages)
    for message in messages:
        for text, span in learnings(message):
            if len(text) < MIN_CHARS:
                result.skipped.append(Skip("too_short", text, "learning"))
                continue
            result.drafts.append(Draft("learning", _title("", text), text, "note", (span,)))
    for message in messages:
        for text, span in preferences(message):
            result.drafts.append(
                Draft("preference", _title("Preference", text), text, "user_preference", (span,))
            )
    return result
