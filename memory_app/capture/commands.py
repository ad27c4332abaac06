"""Which shell commands of a run resolved its problem, and what became of the others.

A command counts when it changes something and what follows it says the
problem went away. Commands that only look (`kubectl get`, `curl` without a
body, `cat`, …) never count, and they do not cut off the evidence of the
change before them: a run that restarts a deployment, lists its pods and
then says "it works now" was resolved by the restart, not by the listing.
"""

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from memory_app.capture.transcript import Message, Span, lines

# The command's own message and four after it: its output, a check, the
# check's output and the agent's word on it.
EVIDENCE_MESSAGES = 5
RESOLVED = "resolved"
FAILED = "failed"
UNCONFIRMED = "unconfirmed"

FENCE = re.compile(r"^\s*```\s*([\w-]*)\s*$")
# A `console` block is a session: its commands carry a `$` prompt, the
# rest is output.
_SHELL_FENCES = {"", "sh", "bash", "shell", "zsh"}
_PROMPT = re.compile(r"^\s*\$\s+(\S.*)")
_LOOKS = re.compile(
    r"^(?:sudo\s+)?(?:"
    r"kubectl(?:\s+(?:-n|--namespace|--context)\s+\S+|\s+--?\S+)*+\s+"
    r"(?:get|describe|logs|top|explain|events|version|cluster-info|auth\s+can-i|"
    r"rollout\s+(?:status|history))|"
    r"helm\s+(?:status|list|ls|get|history)|docker\s+(?:ps|logs|inspect|images|stats)|"
    r"systemctl\s+(?:status|is-active|is-failed)|git\s+(?:log|status|diff|show)|curl|wget|"
    r"cat|ls|grep|rg|tail|head|less|echo|ps|df|du|free|journalctl|dig|nslookup|host|ping|"
    r"traceroute|ss|netstat|uptime|which"
    r")\b"
)
_TRANSFER = re.compile(r"^(?:sudo\s+)?(?:curl|wget)\b")
# A request with a body or a method other than GET/HEAD changes something.
_SENDS = re.compile(
    r"\s(?:-[dFT]|--data\S*|--form\S*|--json|--upload-file|--post-\w+|--method|"
    r"-X\s*(?!GET\b|HEAD\b)\w|--request[\s=]+(?!GET\b|HEAD\b)\w)"
)
# Output written to a file or handed to a program that acts on it: `echo … >>
# /etc/hosts`, `curl … | sh` change something whatever the first word.
_WRITES = re.compile(r">>?\s*(?!&|/dev/null\b)[^\s>&]|\|\s*(?:sudo\s+)?(?:tee|sh|bash|xargs)\b")
_KUBECTL = re.compile(r"^(?:sudo\s+)?kubectl\b")
_GOOD = re.compile(
    r"\b(?:resolved|fixed|recovered|healthy|back to normal|back up|is working|works (?:now|again)|"
    r"working (?:now|again)|succeed(?:s|ed)?|all green|error rate (?:is )?back|"
    r"alert (?:has )?cleared|(?:that|this|it) worked)\b",
    re.I,
)
_BAD = re.compile(
    r"\b(?:errors?(?!\s+rate)|fail(?:s|ed|ing|ure)?|still (?:broken|down|crash\w*)|denied|"
    r"unhealthy|crashloop\w*|not found|timed out|refused)\b",
    re.I,
)
# A sign is turned around by a negation a few words before it in the same
# clause ("no more failed orders", "not fixed yet") or by a word after it
# saying it ended ("the 502 errors are gone").
_NEGATION_CHARS = 40
_NEGATED_BEFORE = re.compile(
    r"(?:\b(?:no|not|nothing|never|without|zero|0(?=\s))|n['\u2019]t)"
    r"(?:[^\w.!?;:\n]+\w+){0,2}[^\w.!?;:\n]*$",
    re.I,
)
_ENDED_AFTER = re.compile(
    r"(?:[^\w.!?;:\n]+\w+){0,2}?[^\w.!?;:\n]+(?:gone|went away|stopped|disappeared|cleared)\b",
    re.I,
)


@dataclass(frozen=True)
class Outcome:
    """A command that changes something, and what the run said after it."""

    command: str
    span: Span
    verdict: str


@dataclass(frozen=True)
class _Line:
    message: int
    text: str
    command: str = ""
    span: Span | None = None


def inspects_only(command: str) -> bool:
    """Whether `command` only looks, so it cannot be what resolved anything.

    `kubectl exec … -- <command>` is judged by the command it runs, and
    any command whose output goes to a file or into `sh`, `tee` or `xargs`
    changes something.
    """
    head, separator, inner = command.partition(" -- ")
    if separator and _KUBECTL.match(head) and re.search(r"\sexec\b", head):
        return inspects_only(inner.strip())
    if not _LOOKS.match(command) or _WRITES.search(command):
        return False
    return not (_TRANSFER.match(command) and _SENDS.search(command))


def _script(messages: Sequence[Message]) -> list[_Line]:
    """Every line of the run in order, commands (`$ …`, shell code blocks) marked."""
    script = []
    for message in messages:
        fence = None
        for offset, line in lines(message.text):
            opening = FENCE.match(line)
            if opening:
                fence = None if fence is not None else opening.group(1).lower()
                continue
            prompt = _PROMPT.match(line)
            if prompt:
                command, start = prompt.group(1).rstrip(), offset + prompt.start(1)
            elif fence in _SHELL_FENCES and line.strip():
                command, start = line.strip(), offset + len(line) - len(line.lstrip())
            else:
                script.append(_Line(message.index, line))
                continue
            span = Span(message.index, start, start + len(command))
            script.append(_Line(message.index, line, command, span))
    return script


def _signs(line: str) -> Iterator[bool]:
    """True for each sign of recovery in `line`, False for each sign of failure."""
    for pattern, good in ((_GOOD, True), (_BAD, False)):
        for found in pattern.finditer(line):
            before = _NEGATED_BEFORE.search(
                line, max(0, found.start() - _NEGATION_CHARS), found.start()
            )
            ended = not good and _ENDED_AFTER.match(
                line, found.end(), found.end() + _NEGATION_CHARS
            )
            yield good != bool(before or ended)


def _verdict(evidence: Iterator[str]) -> str:
    """Resolved at the first line that says so, unless something failed by then."""
    for line in evidence:
        signs = set(_signs(line))
        if False in signs:
            return FAILED
        if True in signs:
            return RESOLVED
    return UNCONFIRMED


def _evidence(script: list[_Line], changes: list[bool], n: int) -> Iterator[str]:
    """The lines after command `n` up to the next change, within EVIDENCE_MESSAGES."""
    last = script[n].message + EVIDENCE_MESSAGES
    for m in range(n + 1, len(script)):
        line = script[m]
        if line.message >= last or changes[m]:
            return
        if not line.command:
            yield line.text


def outcomes(messages: Sequence[Message]) -> list[Outcome]:
    """Each command of the run that changes something, with its verdict."""
    script = _script(messages)
    changes = [bool(line.command) and not inspects_only(line.command) for line in script]
    return [
        Outcome(line.command, line.span, _verdict(_evidence(script, changes, n)))
        for n, line in enumerate(script)
        if changes[n] and line.span is not None
    ]
