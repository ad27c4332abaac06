"""Prompt-injection phrases: text that tries to steer the agent reading it.

Memory is injected into model turns, so a stored "ignore previous
instructions" would be an attack on every later turn. Tolerated only in
conversation stores (scratch memory, where quoting an attack is sometimes
the point) and refused everywhere else, so a draft carrying one can never
be promoted.
"""

import re

from memory_app.safety.types import Detector, Span

_W = r"[\s\W_]+"  # words may be split by any run of spaces or punctuation

_PHRASES = {
    "ignore_instructions": (
        rf"\b(?:ignore|forget|disregard|override){_W}(?:all{_W}|any{_W})?(?:of{_W})?"
        rf"(?:the{_W}|your{_W}|my{_W})?(?:previous|prior|above|earlier|preceding|system|original)"
        rf"{_W}(?:instructions?|prompts?|rules|directions|messages|guidance)\b"
    ),
    "disregard_safety": (
        rf"\b(?:disregard|ignore|bypass|disable|turn{_W}off|circumvent){_W}(?:all{_W}|any{_W})?"
        rf"(?:the{_W}|your{_W})?(?:safety|guardrails?|security{_W}polic(?:y|ies)|content{_W}polic(?:y|ies))\b"
    ),
    "skip_approval": (
        rf"\b(?:skip|bypass|circumvent|ignore|avoid){_W}(?:the{_W}|any{_W}|all{_W})?"
        rf"(?:human{_W})?(?:approvals?|reviews?|verifications?|confirmations?|sign[\s-]?offs?)\b"
    ),
    "no_confirmation": (
        rf"\bdo{_W}not{_W}(?:ask|wait){_W}for{_W}(?:approval|confirmation|permission)\b"
    ),
    "role_override": (
        rf"\b(?:you{_W}are{_W}now|from{_W}now{_W}on{_W}you{_W}are|act{_W}as){_W}"
        rf"(?:in{_W})?(?:an?{_W})?(?:unrestricted|jailbroken|dan\b|developer{_W}mode|root{_W}admin)"
    ),
    "fake_system_message": (
        r"(?:^|\n)\s*(?:#+\s*)?(?:system|assistant)\s*(?:prompt|message)?\s*:\s*(?:new\s+)?instructions?\b"
        r"|<\|im_start\|>|\[/?INST\]|<\s*/?\s*system\s*>"
    ),
    "new_instructions": rf"\b(?:new|updated|revised){_W}instructions{_W}(?:are|follow)\b",
}
_COMPILED = {name: re.compile(pattern, re.I) for name, pattern in _PHRASES.items()}

# Policy text forbids these acts ("never skip approval", "do not ignore
# previous alerts"); a negation right before the phrase makes it benign.
# Only the imperative rules are negatable: a role override never is.
_NEGATABLE = {"ignore_instructions", "disregard_safety", "skip_approval"}
_NEGATION_BEFORE = re.compile(
    r"\b(?:never|not|no|n't|cannot|mustn't|shouldn't|don't|won't)\s+(?:\w+\s+)?$", re.I
)


def _negated(text: str, start: int) -> bool:
    return bool(_NEGATION_BEFORE.search(text[max(0, start - 30) : start]))


def _injection_spans(text: str) -> list[Span]:
    return [
        Span(f"prompt_injection.{name}", match.start(), match.end())
        for name, pattern in _COMPILED.items()
        for match in pattern.finditer(text)
        if not (name in _NEGATABLE and _negated(text, match.start()))
    ]


DETECTORS = [Detector("injection", _injection_spans, tolerated_in_conversations=True)]
