"""Opening review items: one DreamJob awaiting review, one item, no duplicates."""

from django.db import IntegrityError, transaction

from memory_app.actors import Actor
from memory_app.models import (
    DreamJob,
    DreamReviewItem,
    JobStatus,
    MemoryStore,
    MemoryVersion,
    ReviewStatus,
)

OPEN = (ReviewStatus.PENDING, ReviewStatus.DEFERRED)


def open_review_item(
    item: DreamReviewItem,
) -> DreamReviewItem | None:
    """The open item with the same action, source version and target, if any."""
    return DreamReviewItem.objects.filter(
        action=item.action,
        source_version=item.source_version,
        target_store=item.target_store,
        target_path=item.target_path,
        status__in=OPEN,
    ).first()


def review_item_open(
    *,
    actor: Actor,
    kind: str,
    action: str,
    source_version: MemoryVersion,
    target_store: MemoryStore,
    target_path: str,
    **fields,
) -> tuple[DreamReviewItem, bool]:
    """Open a review item, or return the identical one already open.

    Returns (item, created). A unique constraint on open items makes this
    safe against concurrent callers: the loser gets the winner's item.
    """
    draft = DreamReviewItem(
        action=action,
        source_document_id=source_version.document_id,
        source_version=source_version,
        target_store=target_store,
        target_path=target_path,
        proposed_by=actor.agent,
        run_id=actor.run_id,
        **fields,
    )
    if (existing := open_review_item(draft)) is not None:
        return existing, False
    try:
        with transaction.atomic():
            draft.job = DreamJob.objects.create(
                kind=kind,
                status=JobStatus.AWAITING_REVIEW,
                requested_by=actor.agent,
                progress_total=1,
            )
            draft.save()
    except IntegrityError:
        return open_review_item(draft), False
    return draft, True
