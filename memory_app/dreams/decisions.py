"""What reviewers already decided, so dreams do not ask the same question twice.

A merge, a contradiction, a usage review or a scanner flag a human approved
or rejected is settled for as long as the documents it was about keep the
text they had when it was proposed. Once one of them gets a new version the
question is new, and a dream may ask it again.
"""

from collections.abc import Sequence

from django.db.models import Exists, OuterRef, Q

from memory_app.models import (
    DreamReviewItem,
    MemoryDocument,
    MemoryVersion,
    ReviewAction,
    ReviewStatus,
)

DECIDED = (ReviewStatus.APPROVED, ReviewStatus.REJECTED)


def decided_items(
    action: str, documents: Sequence[MemoryDocument], *, kind: str | None = None
) -> list[DreamReviewItem]:
    """The decided `action` items that covered all of `documents`, none of
    which changed since; only those a `kind` of job raised, if given.

    Deletion requests come from several places (an agent, the usage job, a
    rescan) and each asks something else: a reviewer who kept a document
    nobody cites has not said that the secret a rescan finds in it may stay.
    """
    ids = {d.pk for d in documents}
    changed_since = MemoryVersion.objects.filter(
        document_id__in=ids, created_at__gt=OuterRef("created_at")
    )
    items = (
        DreamReviewItem.objects.filter(action=action, status__in=DECIDED)
        .filter(Q(source_document_id__in=ids) | Q(related_documents__in=ids))
        .exclude(Exists(changed_since))
        .distinct()
        .prefetch_related("related_documents")
    )
    if kind is not None:
        items = items.filter(job__kind=kind)
    return [
        item
        for item in items
        if ids <= {d.pk for d in item.related_documents.all()} | {item.source_document_id}
    ]


def already_decided(
    action: str, documents: Sequence[MemoryDocument], *, kind: str | None = None
) -> bool:
    """True if a decided `action` item covered all of `documents` and none changed since."""
    return bool(decided_items(action, documents, kind=kind))


def promotion_decided(draft: MemoryDocument, target: MemoryDocument) -> bool:
    """True if a reviewer decided a promotion of `draft` to `target`'s path,
    approved or rejected, and the draft has not changed since.

    Approving put there the reviewer's reading of the draft (often edited);
    rejecting kept what was there. Either way the draft against that
    document is a question already answered: asking it again as a
    contradiction would put the decided document under dispute, out of the
    trusted context, until someone answered it a second time.
    """
    changed_since = MemoryVersion.objects.filter(
        document_id=draft.pk, created_at__gt=OuterRef("decided_at")
    )
    return (
        DreamReviewItem.objects.filter(
            action=ReviewAction.PROMOTE,
            status__in=DECIDED,
            source_document_id=draft.pk,
            target_store_id=target.store_id,
            target_path=target.path,
        )
        .exclude(Exists(changed_since))
        .exists()
    )
