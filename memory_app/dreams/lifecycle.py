"""Expiry and conversation-store rotation: mechanical, so applied directly.

Both tombstone through `head_update`, so each removal is a version with
its reason, and both skip a row someone else changed meanwhile.
"""

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Exists, F, OuterRef, Q
from django.utils import timezone

from memory_app.dreams.progress import Progress
from memory_app.dreams.proposals import consolidation_target, propose
from memory_app.models import (
    ChangeKind,
    DocState,
    DreamJob,
    DreamKind,
    DreamReviewItem,
    MemoryDocument,
    MemoryStore,
    ReviewAction,
    ReviewStatus,
    Scope,
    Trust,
)
from memory_app.services.documents import head_update
from memory_app.services.events import event_record
from memory_app.services.review_items import OPEN

KEEP_IMPORTANCE = 7


def _tombstone(document_id, reason: str, *, only_if: Q) -> bool:
    with transaction.atomic():
        document = (
            MemoryDocument.objects.select_for_update()
            .filter(only_if, pk=document_id, state=DocState.ACTIVE)
            .first()
        )
        if document is None:
            return False
        head_update(
            document,
            change=ChangeKind.TOMBSTONE,
            author=None,
            fields={"state": DocState.TOMBSTONED},
            reason=reason,
        )
    event_record(
        "memory.document.tombstoned",
        document=document,
        payload={"path": document.path, "reason": reason},
    )
    return True


def expire(job: DreamJob, progress: Progress) -> dict:
    now = timezone.now()
    due = list(
        MemoryDocument.objects.filter(state=DocState.ACTIVE, expires_at__lte=now).values_list(
            "pk", "expires_at"
        )
    )
    progress.total(len(due))
    expired = 0
    for pk, expires_at in due:
        expired += _tombstone(
            pk, f"Expired at {expires_at:%Y-%m-%d %H:%M} UTC.", only_if=Q(expires_at__lte=now)
        )
        progress.advance()
    return {"due": len(due), "expired": expired}


def _rotatable() -> Q:
    """What rotation may remove: agents' drafts that no reviewer is deciding
    on (an open promotion proposal keeps its draft) or decided to keep (a
    declined deletion request). A declined usage review or scanner flag says
    the text may stay for now, not that it outlives the store's bound."""
    held = DreamReviewItem.objects.filter(source_document=OuterRef("pk")).filter(
        Q(action=ReviewAction.PROMOTE, status__in=OPEN)
        | Q(
            action=ReviewAction.TOMBSTONE,
            status=ReviewStatus.REJECTED,
            job__kind=DreamKind.DELETION,
        )
    )
    return Q(~Exists(held), trust=Trust.AGENT_DRAFT)


def rotate(job: DreamJob, progress: Progress) -> dict:
    """Bring each conversation store back to capacity, least recently used first.

    Drafts leave in order: never used before used, then the least recently
    used, then the oldest change. An important draft (rated
    KEEP_IMPORTANCE or more) whose promotion was never asked about is
    proposed when its turn comes and kept while the proposal is open; once a
    reviewer decided it, or if it cannot be proposed (no target store, or
    text the shared store would refuse), it leaves like any other draft.
    Importance is the agent's own rating: it may hold a draft until a person
    has looked, never lift the store's bound. Only agents' drafts rotate
    out: a document a reviewer approved (a merge in the conversation) or
    kept by declining its deletion stays, since rotating it out would undo
    a person's decision without asking one.
    """
    capacity = settings.MEMORY_CONVERSATION_CAPACITY
    stores = list(
        MemoryStore.objects.filter(scope=Scope.CONVERSATION)
        .annotate(active=Count("documents", filter=Q(documents__state=DocState.ACTIVE)))
        .filter(active__gt=capacity)
    )
    progress.total(len(stores))
    target = consolidation_target()
    ever_proposed = DreamReviewItem.objects.filter(
        action=ReviewAction.PROMOTE, source_document=OuterRef("pk")
    )
    stats = {"stores": len(stores), "tombstoned": 0, "proposed": 0}
    for store in stores:
        in_order = (
            MemoryDocument.objects.filter(_rotatable(), store=store, state=DocState.ACTIVE)
            .annotate(proposed=Exists(ever_proposed))
            .order_by(F("last_used_at").asc(nulls_first=True), "updated_at", "pk")
            .only("id", "path", "title", "content", "version", "importance")
        )
        for document in in_order:
            with transaction.atomic():
                if not _over_capacity(store, capacity):
                    break
                outcome = _rotate_out(job, document, store, capacity, target)
            if outcome:
                stats[outcome] += 1
        progress.advance()
    return stats


def _over_capacity(store: MemoryStore, capacity: int) -> bool:
    """Count the store's active documents under a lock on its row.

    The count is taken afresh before each removal, and the lock (which does
    not block new documents) makes rotations of one store take turns, so
    however many run at once the store never goes below its capacity.
    """
    MemoryStore.objects.select_for_update(no_key=True).filter(pk=store.pk).exists()
    active = MemoryDocument.objects.filter(store=store, state=DocState.ACTIVE).count()
    return active > capacity


def _rotate_out(
    job: DreamJob,
    document: MemoryDocument,
    store: MemoryStore,
    capacity: int,
    target: MemoryStore | None,
) -> str | None:
    """Propose an important draft, else tombstone it; the stat it adds to."""
    if (
        document.importance >= KEEP_IMPORTANCE
        and not document.proposed
        and target is not None
        and propose(
            job,
            document,
            target_store=target,
            target_path=document.path,
            rationale=f"Important draft rotating out of full store {store.label}.",
        )
    ):
        return "proposed"
    removed = _tombstone(
        document.pk,
        f"Rotated out: {store.label} held more than {capacity} active memories.",
        only_if=_rotatable() & Q(version=document.version),
    )
    return "tombstoned" if removed else None
