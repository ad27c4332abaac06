"""memory_context and memory_mark_used: what a turn was given, and what it used."""

from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from memory_app.access import documents_readable, store_ref
from memory_app.actors import Actor
from memory_app.hashing import sha256_text
from memory_app.models import ContextTrace, MemoryDocument, MemoryUsage
from memory_app.selectors.context import BuiltContext, build_context
from memory_app.services.events import event_record


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
    budget = token_budget or settings.MEMORY_CONTEXT_TOKEN_BUDGET
    built = build_context(actor=actor, message=message, max_docs=max_docs, token_budget=budget)
    with transaction.atomic():
        # The usage audit is not worth a WAL flush on the hot path: a crash
        # may lose the last moment's traces, never a document or a version.
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit = off")
        trace = ContextTrace.objects.create(
            principal=actor.user,
            conversation=actor.conversation,
            run_id=actor.run_id,
            message_sha256=sha256_text(message),
            candidates=built.trace,
            context_sha256=sha256_text(built.text),
            tokens=built.tokens,
            token_budget=budget,
        )
        event = event_record(
            "memory.context.loaded",
            actor=actor,
            payload={
                "trace_id": trace.pk,
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
            },
        )
        MemoryUsage.objects.bulk_create(
            MemoryUsage(
                run_id=actor.run_id,
                conversation=actor.conversation,
                principal=actor.user,
                document=entry.document,
                version=entry.document.version,
                rank=rank,
                score=entry.score,
                components=entry.components,
                block=entry.block,
                tokens=entry.tokens,
                trace=trace,
                event=event,
            )
            for rank, entry in enumerate(built.entries, start=1)
        )
    return ContextResult(built, event.pk, trace.pk)


@transaction.atomic
def memory_mark_used(*, actor: Actor, ids: Sequence[str]) -> int:
    """Count a use of each readable document; mark this run's usage rows as hits.

    Ids the actor may not read are ignored rather than reported, so the
    answer reveals nothing about them. Returns how many documents counted.
    """
    documents = documents_readable(actor.user).filter(pk__in=list(ids))
    document_ids = list(documents.values_list("pk", flat=True))
    if not document_ids:
        return 0
    now = timezone.now()
    MemoryDocument.objects.filter(pk__in=document_ids).update(
        hit_count=F("hit_count") + 1, last_used_at=now
    )
    usages = MemoryUsage.objects.filter(document_id__in=document_ids, principal=actor.user)
    if actor.run_id:
        usages.filter(run_id=actor.run_id).update(hit=True)
    return len(document_ids)
