"""Expiry and conversation-store rotation: mechanical, so applied directly.

Both tombstone through `head_update`, so each removal is a version with
its reason, and both skip a row someone else changed meanwhile.
"""

from django.conf import settings
from django.db import transaction
from django.db.models import Count, F, Q
from django.utils import timezone

from memory_app.dreams.progress import Progress
from memory_app.dreams.proposals import (
    consolidation_target,
    ever_proposed_for_promotion,
    propose,
)
from memory_app.models import (
    ChangeKind,
    DocState,
    DreamJob,
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


# What rotation may remove: unimportant drafts, as written by agents.
ROTATABLE = Q(importance__lt=KEEP_IMPORTANCE, trust=Trust.AGENT_DRAFT)


def rotate(job: DreamJob, progress: Progress) -> dict:
    """Bring each conversation store back to capacity, oldest low-value drafts first.

    Important drafts among the oldest are proposed for promotion and kept;
    only the others are tombstoned. Only agents' drafts rotate out: a
    document a reviewer approved (a merge in the conversation) or kept by
    declining its deletion stays, since rotating it out would undo a
    person's decision without asking one.
    """
    capacity = settings.MEMORY_CONVERSATION_CAPACITY
    stores = list(
        MemoryStore.objects.filter(scope=Scope.CONVERSATION)
        .annotate(active=Count("documents", filter=Q(documents__state=DocState.ACTIVE)))
        .filter(active__gt=capacity)
    )
    progress.total(len(stores))
    target = consolidation_target()
    proposed_ids = ever_proposed_for_promotion()
    kept_by_review = DreamReviewItem.objects.filter(
        action=ReviewAction.TOMBSTONE, status=ReviewStatus.REJECTED
    ).values("source_document_id")
    stats = {"stores": len(stores), "tombstoned": 0, "proposed": 0}
    for store in stores:
        excess = store.active - capacity
        oldest = (
            MemoryDocument.objects.filter(store=store, state=DocState.ACTIVE)
            .order_by(F("last_used_at").asc(nulls_first=True), "updated_at")
            .only("id", "path", "title", "content", "version", "importance")
        )
        important = [d for d in oldest[:excess] if d.importance >= KEEP_IMPORTANCE]
        for document in important:
            if (
                target is not None
                and not DreamReviewItem.objects.filter(
                    source_document=document, action=ReviewAction.PROMOTE
                ).exists()
            ):
                stats["proposed"] += propose(
                    job,
                    document,
                    target_store=target,
                    target_path=document.path,
                    rationale=f"Important draft rotating out of full store {store.label}.",
                )
        removable = (
            oldest.filter(ROTATABLE).exclude(pk__in=proposed_ids).exclude(pk__in=kept_by_review)
        )
        for pk in removable.values_list("pk", flat=True)[:excess]:
            stats["tombstoned"] += _tombstone(
                pk,
                f"Rotated out: {store.label} held more than {capacity} active memories.",
                only_if=ROTATABLE,
            )
        progress.advance()
    return stats
