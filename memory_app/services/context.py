"""memory_context and memory_mark_used: what a turn was given, and what it used."""

from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from memory_app.access import documents_readable, live_q, store_ref
from memory_app.actors import Actor
from memory_app.hashing import sha256_text
from memory_app.models import MemoryDocument, MemoryUsage
from memory_app.selectors.context import BuiltContext, build_context
from memory_app.services.context_audit import AuditRow, context_audit_write


@dataclass(frozen=True)
class ContextResult:
    built: BuiltContext
    event_id: int | None
    trace_id: int | None
    disabled: bool = False


def memory_context_load(
    *, actor: Actor, message: str, max_docs: int = 8, token_budget: int | None = None
) -> ContextResult:
    """Build the memory context for one turn and record what was injected.

    Permission: read memory (checked by the caller). Writes one
    ContextTrace (every candidate, its components and what the budget cut),
    a MemoryUsage row per injected document, and a `memory.context.loaded`
    event. With MEMORY_ENABLED off: an empty context, nothing recorded.
    """
    if not settings.MEMORY_ENABLED:
        return ContextResult(BuiltContext("", 0, []), None, None, disabled=True)
    # The setting is the operator's ceiling (API.md: "max tokens of memory
    # per turn"); an agent may ask for less, never more.
    budget = min(
        token_budget or settings.MEMORY_CONTEXT_TOKEN_BUDGET, settings.MEMORY_CONTEXT_TOKEN_BUDGET
    )
    built = build_context(actor=actor, message=message, max_docs=max_docs, token_budget=budget)
    payload = {
        "tokens": built.tokens,
        "documents": [
            {
                "id": str(e.document.pk),
                "path": e.document.path,
                "store": store_ref(e.document.store, actor),
                "trust": e.document.trust,
                "block": e.block,
            }
            for e in built.entries
        ],
    }
    if actor.run_id:
        payload["run_id"] = actor.run_id
    if actor.on_behalf_of is not None:
        payload["on_behalf_of"] = actor.user.get_username()
    # One statement, atomic by itself: no transaction of its own (that would
    # be two more round trips, BEGIN and COMMIT).
    trace_id, event_id = context_audit_write(
        principal_id=actor.user.pk,
        agent_id=actor.agent.pk,
        conversation_id=actor.conversation.pk if actor.conversation else None,
        run_id=actor.run_id,
        message_sha256=sha256_text(message),
        context_sha256=sha256_text(built.text),
        candidates=built.trace,
        tokens=built.tokens,
        budget=budget,
        payload=payload,
        rows=[
            AuditRow(e.document.pk, e.document.version, e.score, e.components, e.block, e.tokens)
            for e in built.entries
        ],
    )
    return ContextResult(built, event_id, trace_id)


@transaction.atomic
def memory_mark_used(*, actor: Actor, ids: Sequence[str]) -> int:
    """Count a use of each named document this turn's run was given.

    Permission: read memory (checked by the caller). A document counts
    once per injection: its usage rows of this run (of this conversation
    when the call names no run) that are not yet hits become hits, and
    each document with such a row gets one more `hit_count` and a fresh
    `last_used_at`. A repeat, an id never injected into the run, or a
    document tombstoned or expired since counts nothing: these figures
    decide what compaction keeps and rotates. Ids the actor may not read
    are ignored rather than reported, so the answer reveals nothing about
    them. Three statements whatever the number of ids. Returns how many
    documents counted.
    """
    rows = list(_unmarked_usages(actor, ids).select_for_update().values_list("pk", "document_id"))
    if not rows:
        return 0
    MemoryUsage.objects.filter(pk__in=[pk for pk, _ in rows]).update(hit=True)
    document_ids = {document_id for _, document_id in rows}
    MemoryDocument.objects.filter(pk__in=document_ids).update(
        hit_count=F("hit_count") + 1, last_used_at=timezone.now()
    )
    return len(document_ids)


def _unmarked_usages(actor: Actor, ids: Sequence[str]) -> QuerySet[MemoryUsage]:
    """The not-yet-hit injections into the actor's run of the named documents
    it may still read and that are still served (live, unexpired)."""
    documents = documents_readable(actor.user).filter(live_q(), pk__in=list(ids))
    usages = MemoryUsage.objects.filter(
        principal=actor.user, hit=False, document_id__in=documents.values("pk")
    )
    if actor.run_id:
        return usages.filter(run_id=actor.run_id)
    return usages.filter(run_id="", conversation=actor.conversation)
