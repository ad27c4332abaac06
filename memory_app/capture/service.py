"""memory_capture: propose conversation drafts from a run's transcript.

Each draft is written with `memory_remember`, so it is scanned,
deduplicated against the store and counted against the run's write cap
exactly like a draft the agent wrote itself. One draft failing does not
undo the others: the answer says which were kept and why the rest were not.
"""

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from django.conf import settings

from memory_app.access import access_store
from memory_app.actors import Actor
from memory_app.capture import rules
from memory_app.capture.llm import configured_extractor
from memory_app.capture.transcript import Draft, Extraction, Message, Skip
from memory_app.errors import InvalidInput, PolicyDenied, RateLimited, TooLarge, WriteBlocked
from memory_app.paths import path_from_title
from memory_app.policy import check_can_write
from memory_app.safety import scan_fields
from memory_app.services.dedup import TOKEN_OVERLAP_MIN, token_overlap
from memory_app.services.documents import WriteResult
from memory_app.services.events import event_record
from memory_app.services.remember import RememberInput, memory_remember
from memory_app.services.versions import SourceRef

EXCERPT_CHARS = 200
SLUG_CHARS = 60
# Each quote is scanned on its own, a few milliseconds apiece, and a long
# run can leave thousands of commands unconfirmed: past this many, what the
# extractors left out is still listed with its reason, only unquoted.
QUOTED_SKIPS = 50


class Extractor(Protocol):
    def extract(self, messages: Sequence[Message]) -> Extraction: ...


@dataclass
class CaptureResult:
    kept: list[tuple[Draft, WriteResult]] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)


def excerpt(text: str) -> str:
    """A short quote of a skipped draft, or "" if the scanner finds anything in it.

    The whole draft is scanned, not the quote: a secret cut in half by the
    quote's end would no longer be recognised.
    """
    return "" if scan_fields({"content": text}, conversation_store=False) else text[:EXCERPT_CHARS]


def _quoted(skipped: list[Skip]) -> list[Skip]:
    """The extractors' skips, each quote passed through `excerpt` like a draft's.

    The extractors quote the transcript as it is, secrets included.
    """
    quotes: dict[str, str] = {}
    for skip in skipped:
        if skip.excerpt and skip.excerpt not in quotes and len(quotes) < QUOTED_SKIPS:
            quotes[skip.excerpt] = excerpt(skip.excerpt)
    return [replace(skip, excerpt=quotes.get(skip.excerpt, "")) for skip in skipped]


def _path(draft: Draft) -> str:
    """Stable per text: the same draft captured twice lands on the same path."""
    digest = hashlib.sha256(draft.content.encode()).hexdigest()[:8]
    slug = path_from_title(draft.title.partition(": ")[2] or draft.title)[:SLUG_CHARS]
    return f"captured/{draft.kind}/{slug.rstrip('-.')}-{digest}"


def _distinct(drafts: list[Draft], result: CaptureResult) -> list[Draft]:
    """Drafts that do not restate an earlier draft of the same transcript."""
    kept: list[Draft] = []
    for draft in drafts:
        if any(token_overlap(draft.content, k.content) >= TOKEN_OVERLAP_MIN for k in kept):
            result.skipped.append(
                Skip("duplicate_in_transcript", excerpt(draft.content), draft.kind)
            )
        else:
            kept.append(draft)
    return kept


def memory_capture(
    *,
    actor: Actor,
    messages: Sequence[Message],
    run_id: str = "",
    source_refs: Sequence[SourceRef] = (),
    extractor: Extractor | None = None,
) -> CaptureResult:
    """Extract drafts from `messages` and remember each in the conversation store.

    Permission and errors as memory_remember for the call as a whole (403
    without the write permission, 400 without a conversation, 413 over
    MEMORY_CAPTURE_MAX_CHARS); per draft,
    a scanner refusal, policy denial or the run's write cap becomes a
    skipped entry instead of an error.
    """
    check_can_write(actor)
    size = sum(len(m.text) for m in messages)
    limit = settings.MEMORY_CAPTURE_MAX_CHARS
    if size > limit:
        raise TooLarge(f"The transcript has {size} characters; the limit is {limit}.")
    if actor.conversation is None and not actor.conversation_name:
        # Not the `store` field memory_remember would name: capture has none.
        raise InvalidInput(
            "memory_capture writes into a conversation's store.",
            fields={"X-Memory-Conversation": ["Send the conversation the transcript is from."]},
        )
    access_store(actor, "conversation")
    # The body's run names the transcript, for provenance; the write cap
    # counts the run the runtime named (X-Memory-Run), which the model
    # filling in the body cannot change.
    transcript_run = run_id or actor.run_id
    extraction = rules.extract(messages)
    model = extractor or configured_extractor()
    if model is not None:
        extra = model.extract(messages)
        extraction.drafts += extra.drafts
        extraction.skipped += extra.skipped
    result = CaptureResult(skipped=_quoted(extraction.skipped))
    drafts = _distinct(extraction.drafts, result)
    cap = settings.MEMORY_CAPTURE_MAX_DRAFTS
    for draft in drafts[cap:]:
        result.skipped.append(Skip("over_draft_limit", excerpt(draft.content), draft.kind))
    for n, draft in enumerate(drafts[:cap]):
        if not _write(actor, draft, transcript_run, source_refs, result):
            for rest in drafts[n + 1 : cap]:
                result.skipped.append(Skip("write_cap_reached", excerpt(rest.content), rest.kind))
            break
    event_record(
        "memory.capture.completed",
        actor=actor,
        payload={
            "run_id": transcript_run,
            "kept": [str(write.document.pk) for _, write in result.kept],
            "skipped": [s.reason for s in result.skipped],
        },
    )
    return result


def _write(actor: Actor, draft: Draft, run_id: str, extra_refs, result: CaptureResult) -> bool:
    """Remember one draft; False when the run may not write any more."""
    refs = [SourceRef("run", span.ref(run_id)) for span in draft.spans]
    data = RememberInput(
        store="conversation",
        path=_path(draft),
        title=draft.title,
        content=draft.content,
        doc_type=draft.doc_type,
        recall_hint=f"Captured from run {run_id or 'transcript'} ({draft.kind}).",
        tags=("captured", draft.kind),
        source_refs=[*refs, *extra_refs][:50],
    )
    try:
        write = memory_remember(actor=actor, data=data)
    except WriteBlocked:
        result.skipped.append(Skip("write_blocked", kind=draft.kind))
    except PolicyDenied as error:
        result.skipped.append(Skip(error.extra["reason"], excerpt(draft.content), draft.kind))
    except TooLarge:
        result.skipped.append(Skip("too_large", excerpt(draft.content), draft.kind))
    except RateLimited:
        result.skipped.append(Skip("write_cap_reached", excerpt(draft.content), draft.kind))
        return False
    else:
        if write.outcome == "unchanged":
            result.skipped.append(Skip("already_remembered", excerpt(draft.content), draft.kind))
        else:
            result.kept.append((draft, write))
    return True
