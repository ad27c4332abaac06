"""Opening review items: one DreamJob awaiting review, one item, no duplicates."""

from django.db import IntegrityError, transaction
from django.utils import timezone

from memory_app.actors import Actor
from memory_app.models import (
    DreamJob,
    DreamKind,
    DreamReviewItem,
    JobStatus,
    MemoryStore,
    MemoryVersion,
    ReviewStatus,
)
from memory_app.policy import check_write_quota
from memory_app.services.constrain import OPEN, constraints_release


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
    actor: Actor | None,
    kind: str,
    action: str,
    source_version: MemoryVersion,
    target_store: MemoryStore,
    target_path: str,
    job: DreamJob | None = None,
    **fields,
) -> tuple[DreamReviewItem, bool]:
    """Open a review item, or return the identical one already open.

    Returns (item, created). A unique constraint on open items makes this
    safe against concurrent callers: the loser gets the winner's item.
    An agent's proposal gets a job of its own and counts against its write
    quota (429 at the cap; asking again for what is already open does not
    count); a dream job (`actor` None) files its proposals under its own run.
    """
    draft = DreamReviewItem(
        action=action,
        source_document_id=source_version.document_id,
        source_version=source_version,
        target_store=target_store,
        target_path=target_path,
        proposed_by=actor.agent if actor else None,
        run_id=actor.run_id if actor else "",
        **fields,
    )
    if (existing := open_review_item(draft)) is not None:
        return existing, False
    try:
        with transaction.atomic():
            if actor is not None:
                check_write_quota(actor)
            draft.job = job or DreamJob.objects.create(
                kind=kind,
                status=JobStatus.AWAITING_REVIEW,
                requested_by=actor.agent if actor else None,
                progress_total=1,
            )
            draft.save()
    except IntegrityError:
        return open_review_item(draft), False
    return draft, True


def review_item_close(item: DreamReviewItem, *, user, status: str, note: str) -> None:
    """Record a decision; a single-proposal job closes with its item.

    A dream run's status describes the run, not the fate of each of its
    proposals, so deciding one of them leaves the run as it is.
    """
    now = timezone.now()
    item.status, item.decided_by, item.decided_at, item.decision_note = status, user, now, note
    item.save()
    constraints_release(item)
    if item.job.kind in (DreamKind.PROMOTION, DreamKind.DELETION):
        approved = status == ReviewStatus.APPROVED
        item.job.status = JobStatus.SUCCEEDED if approved else JobStatus.REJECTED
        item.job.progress_done, item.job.finished_at = 1, now
        item.job.save()
