"""An optional extractor that asks an OpenAI-compatible chat endpoint.

Off unless MEMORY_CAPTURE_LLM_URL is set. The model may only point at
what the transcript says: each draft it returns must quote the transcript,
and a draft whose quote cannot be found is dropped, so every kept draft
still has a source span. Secrets the scanner recognises are masked before
the transcript leaves the process.
"""

import json
import logging
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings

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
            answer = json.load(response)
        drafts = json.loads(answer["choices"][0]["message"]["content"]).get("drafts", [])
        if not isinstance(drafts, list):
            raise ValueError("'drafts' is not a list")
        return drafts

    def extract(self, messages: Sequence[Message]) -> Extraction:
        transcript = "\n\n".join(f"[{m.role}]\n{_masked(m.text)}" for m in messages)
        result = Extraction()
        try:
            proposed = self._ask(transcript)
        except (OSError, urllib.error.URLError, ValueError, KeyError, IndexError, TypeError) as e:
            # The reason only: an error body could echo the transcript.
            logger.warning("capture extractor failed: %s", type(e).__name__)
            result.skipped.append(Skip("extractor_unavailable"))
            return result
        for item in proposed:
            if not isinstance(item, dict):
                result.skipped.append(Skip("malformed_draft"))
                continue
            kind = item.get("kind")
            content = str(item.get("content") or "").strip()
            title = str(item.get("title") or "").strip()[:300]
            span = _locate(str(item.get("quote") or ""), messages)
            if kind not in KINDS or not content:
                result.skipped.append(Skip("malformed_draft", kind=str(kind or "")))
            elif span is None:
                result.skipped.append(Skip("no_source_span", content, kind))
            else:
                title = title or title_from_content(content, 90)
                result.drafts.append(Draft(kind, title, content, KINDS[kind], (span,)))
        return result


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
