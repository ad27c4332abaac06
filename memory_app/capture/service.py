"""memory_capture: propose conversation drafts from a run's transcript.

Each draft is written with `memory_remember`, so it is scanned,
deduplicated against the store and counted against the run's write cap
exactly like a draft the agent wrote itself. One draft refused does not
undo the others: the answer says which were kept and why the rest were
not. The drafts commit together, so a capture that fails on the way
leaves none of them behind and its answer is never wrong about the store.
"""

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from django.conf import settings
from django.db import transaction

from memory_app.access import access_store
from memory_app.actors import Actor
from memory_app.capture import rules
from memory_app.capture.llm import configured_extractor
from memory_app.capture.transcript import Draft, Extraction, Message, Skip
from memory_app.dreams.claims import without_thousands
from memory_app.errors import InvalidInput, PolicyDenied, RateLimited, TooLarge, WriteBlocked
from memory_app.models import MemoryStore
from memory_app.paths import path_from_title
from memory_app.policy import RATE_WINDOW, check_can_write
from memory_app.safety import scan_fields
from memory_app.services.dedup import TOKEN_OVERLAP_MIN
from memory_app.services.documents import WriteResult
from memory_app.services.events import event_record
from memory_app.services.guard import recording_refusals, scan_for_store
from memory_app.services.remember import RememberInput, memory_remember
from memory_app.services.versions import SourceRef

EXCERPT_CHARS = 200
SLUG_CHARS = 60
# Each quote is scanned on its own, a few milliseconds apiece, and a long
# run can leave thousands of commands unconfirmed or drafts over the limit:
# past this many, what capture left out is still listed with its reason,
# only unquoted.
QUOTED_SKIPS = 50
# The words `services.dedup.token_overlap` compares.
_WORD = re.compile(r"[a-z0-9]+")


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
    """The skips of what was never written, each quote passed through `excerpt`.

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


def _words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(without_thousands(text).lower()))


def _overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """Jaccard overlap of two word sets, as `token_overlap` computes it for two texts."""
    if not a or not b:
        return 0.0
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared)


def _distinct(drafts: list[Draft], cap: int) -> tuple[list[Draft], list[Skip]]:
    """The first `cap` drafts that do not restate an earlier one, and the
    others as skips quoting them.

    Only `cap` drafts can be written, so once that many are found the rest
    are not compared at all, and each draft's words are read once: a long
    run yields thousands of drafts, and comparing each with every other
    took minutes.
    """
    kept: list[tuple[Draft, frozenset[str]]] = []
    skipped: list[Skip] = []
    for n, draft in enumerate(drafts):
        if len(kept) == cap:
            skipped += [Skip("over_draft_limit", rest.content, rest.kind) for rest in drafts[n:]]
            break
        words = _words(draft.content)
        if any(_overlap(words, other) >= TOKEN_OVERLAP_MIN for _, other in kept):
            skipped.append(Skip("duplicate_in_transcript", draft.content, draft.kind))
        else:
            kept.append((draft, words))
    return [draft for draft, _ in kept], skipped


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
    MEMORY_CAPTURE_MAX_CHARS, 422 for a run id the scanner refuses); per
    draft, a scanner refusal, policy denial or the run's write limits
    become a skipped entry instead of an error.
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
    store = access_store(actor, "conversation")
    # The body's run names the transcript, for provenance; the write cap
    # counts the run the runtime named (X-Memory-Run), which the model
    # filling in the body cannot change.
    transcript_run = run_id or actor.run_id
    _check_run(actor, transcript_run, store)
    extraction = _extracted(messages, extractor)
    drafts, passed_over = _distinct(extraction.drafts, settings.MEMORY_CAPTURE_MAX_DRAFTS)
    result = CaptureResult(skipped=_quoted([*extraction.skipped, *passed_over]))
    with transaction.atomic():
        _write_all(actor, drafts, transcript_run, source_refs, result)
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


def _check_run(actor: Actor, run_id: str, store: MemoryStore) -> None:
    """Scan the run id as a draft's text is scanned (422 write_blocked, recorded).

    It goes into every draft's source refs and the capture's event, and
    the agent filling in the body may have pasted anything into it.
    Checked before the drafts' transaction: the refusal's record must
    survive it.
    """
    with recording_refusals(actor, tool="memory_capture", store="conversation"):
        scan_for_store({"run_id": run_id}, store)


def _extracted(messages: Sequence[Message], extractor: Extractor | None) -> Extraction:
    """The offline extractor's drafts, then the model's when one is configured."""
    extraction = rules.extract(messages)
    model = extractor or configured_extractor()
    if model is not None:
        extra = model.extract(messages)
        extraction.drafts += extra.drafts
        extraction.skipped += extra.skipped
    return extraction


def _write_all(
    actor: Actor, drafts: list[Draft], run_id: str, extra_refs, result: CaptureResult
) -> None:
    """Remember each draft in turn; once a write limit stops the writes,
    the drafts left are skipped for the same reason."""
    for n, draft in enumerate(drafts):
        stopped = _write(actor, draft, run_id, extra_refs, result)
        if stopped is not None:
            result.skipped += [
                replace(stopped, excerpt=excerpt(rest.content), kind=rest.kind)
                for rest in drafts[n + 1 :]
            ]
            return


def _write(
    actor: Actor, draft: Draft, run_id: str, extra_refs, result: CaptureResult
) -> Skip | None:
    """Remember one draft; the skip of a limit that stops all further writes, else None."""
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
    except RateLimited as error:
        stopped = _limit_skip(error, draft)
        result.skipped.append(stopped)
        return stopped
    else:
        if write.outcome == "unchanged":
            result.skipped.append(Skip("already_remembered", excerpt(draft.content), draft.kind))
        else:
            result.kept.append((draft, write))
    return None


def _limit_skip(error: RateLimited, draft: Draft) -> Skip:
    """The skip for a write limit: the per-minute rate (wait and call again,
    in `retry_after` seconds) or the run's cap (only a new run writes more).

    The rate never asks to wait longer than its window; the cap asks for
    an hour.
    """
    quote = excerpt(draft.content)
    if error.retry_after <= RATE_WINDOW.total_seconds() + 1:
        return Skip("rate_limited", quote, draft.kind, retry_after=error.retry_after)
    return Skip("write_cap_reached", quote, draft.kind)
