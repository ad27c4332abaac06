"""An optional extractor that asks an OpenAI-compatible chat endpoint.

Off unless MEMORY_CAPTURE_LLM_URL is set. The model may only point at
what the transcript says: each draft it returns must quote the transcript,
and a draft whose quote cannot be found is dropped, so every kept draft
still has a source span. Secrets the scanner recognises are masked before
the transcript leaves the process.

What the model answers is held to what the API asks of an agent's own
text: a draft with a character the API refuses (a control character, a
bidirectional override, a lone surrogate) is dropped as malformed, and an
answer not shaped as asked counts as no answer at all.
"""

import json
import logging
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings

from memory_app.api.validation import text_problem
from memory_app.capture.transcript import Draft, Extraction, Message, Skip, Span
from memory_app.safety import scan_fields
from memory_app.safety.normalize import normalize
from memory_app.services.titles import title_from_content

logger = logging.getLogger(__name__)

KINDS = {
    "learning": "note",
    "incident": "incident",
    "command": "runbook",
    "preference": "user_preference",
}
MASK = "[redacted]"
TITLE_CHARS = 300
# The texts of one proposed draft, each a string when present.
DRAFT_FIELDS = ("kind", "title", "content", "quote")
# What the model's answer can fail with, besides a network error: each
# means the endpoint gave no usable answer.
ANSWER_ERRORS = (
    OSError,
    urllib.error.URLError,
    ValueError,
    KeyError,
    IndexError,
    TypeError,
    RecursionError,
)
PROMPT = (
    "You read an AI agent's run transcript and list what is worth remembering for later runs: "
    "explicit learnings or lessons, an incident's root cause, fix and how it was verified, "
    "commands that resolved an incident, and preferences the user stated. Ignore chit-chat "
    "and anything not stated in the transcript. Answer with JSON only: "
    '{"drafts": [{"kind": "learning|incident|command|preference", "title": "...", '
    '"content": "...", "quote": "an exact, contiguous excerpt of the transcript it rests on"}]}. '
    'Answer {"drafts": []} when nothing qualifies.'
)


def _masked(raw: str) -> str:
    """`raw`, normalised as the scanner reads it, with every blocking finding masked."""
    text = normalize(raw)
    spans = sorted(
        (f.start, f.end)
        for f in scan_fields({"content": text}, conversation_store=True)
        if f.blocking
    )
    out, at = [], 0
    for start, end in spans:
        if start >= at:
            out += [text[at:start], MASK]
            at = end
    return "".join(out) + text[at:]


def _locate(quote: str, messages: Sequence[Message]) -> Span | None:
    needle = quote.strip()
    if not needle:
        return None
    for message in messages:
        at = message.text.find(needle)
        if at < 0:
            at = message.text.lower().find(needle.lower())
        if at >= 0:
            return Span(message.index, at, at + len(needle))
    return None


@dataclass(frozen=True)
class ChatExtractor:
    """Extraction by a chat-completions model at `url` (…/v1)."""

    url: str
    model: str
    api_key: str = ""
    timeout: float = 20.0

    def _ask(self, transcript: str) -> list[dict]:
        body = {
            "model": self.model,
            "temperature": 0,
            "response_format": {"type": "json_object"},
            "messages": [
                {"role": "system", "content": PROMPT},
                {"role": "user", "content": transcript},
            ],
        }
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        if not self.url.startswith(("http://", "https://")):
            raise ValueError("MEMORY_CAPTURE_LLM_URL must be an http(s) URL")
        request = urllib.request.Request(  # noqa: S310 (scheme checked above)
            self.url.rstrip("/") + "/chat/completions",
            data=json.dumps(body).encode(),
            headers=headers,
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310
            return _proposed(json.load(response))

    def extract(self, messages: Sequence[Message]) -> Extraction:
        transcript = "\n\n".join(f"[{_masked(m.role)}]\n{_masked(m.text)}" for m in messages)
        result = Extraction()
        try:
            proposed = self._ask(transcript)
        except ANSWER_ERRORS as e:
            # The reason only: an error body could echo the transcript.
            logger.warning("capture extractor failed: %s", type(e).__name__)
            result.skipped.append(Skip("extractor_unavailable"))
            return result
        for item in proposed:
            outcome = _draft(item, messages)
            if isinstance(outcome, Draft):
                result.drafts.append(outcome)
            else:
                result.skipped.append(outcome)
        return result


def _proposed(answer) -> list:
    """The `drafts` list of a chat-completions answer; ValueError when the
    answer is not shaped as the prompt asks (an object holding a list)."""
    content = answer["choices"][0]["message"]["content"]
    if not isinstance(content, str):
        raise ValueError("The answer's content is not text.")
    proposal = json.loads(content)
    if not isinstance(proposal, dict):
        raise ValueError("The answer is not a JSON object.")
    drafts = proposal.get("drafts", [])
    if not isinstance(drafts, list):
        raise ValueError("'drafts' is not a list.")
    return drafts


def _texts(item: object) -> dict[str, str] | None:
    """A proposed draft's texts ("" when absent), or None when it is not an
    object or one of them is not text the API would store."""
    if not isinstance(item, dict):
        return None
    texts = {name: item.get(name) or "" for name in DRAFT_FIELDS}
    if all(isinstance(text, str) and text_problem(text) is None for text in texts.values()):
        return texts
    return None


def _draft(item: object, messages: Sequence[Message]) -> Draft | Skip:
    """One proposed draft, or why it is skipped.

    A malformed draft is reported without its text, and with its kind only
    when that is one of KINDS: whatever else the model wrote may be
    anything, a secret or a bidirectional override included.
    """
    texts = _texts(item)
    if texts is None:
        return Skip("malformed_draft")
    kind, content = texts["kind"], texts["content"].strip()
    if kind not in KINDS:
        return Skip("malformed_draft")
    if not content:
        return Skip("malformed_draft", kind=kind)
    span = _locate(texts["quote"], messages)
    if span is None:
        return Skip("no_source_span", content, kind)
    title = texts["title"].strip()[:TITLE_CHARS] or title_from_content(content, 90)
    return Draft(kind, title, content, KINDS[kind], (span,))


def configured_extractor() -> ChatExtractor | None:
    """The model extractor when MEMORY_CAPTURE_LLM_URL is set, else None."""
    if not settings.MEMORY_CAPTURE_LLM_URL:
        return None
    return ChatExtractor(
        url=settings.MEMORY_CAPTURE_LLM_URL,
        model=settings.MEMORY_CAPTURE_LLM_MODEL,
        api_key=settings.MEMORY_CAPTURE_LLM_API_KEY,
        timeout=settings.MEMORY_CAPTURE_LLM_TIMEOUT,
    )
