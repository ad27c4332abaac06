"""What reviewers already decided, so dreams do not ask the same question twice.

A merge or a contradiction a human approved or rejected is settled for as
long as the documents it was about keep the text they had when it was
proposed. Once one of them gets a new version the question is new, and a
dream may ask it again.
"""

from collections.abc import Sequence

from django.db.models import Exists, OuterRef, Q

from memory_app.models import DreamReviewItem, MemoryDocument, MemoryVersion, ReviewStatus

DECIDED = (ReviewStatus.APPROVED, ReviewStatus.REJECTED)


def already_decided(action: str, documents: Sequence[MemoryDocument]) -> bool:
    """True if a decided `action` item covered all of `documents` and none changed since."""
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
    for item in items:
        covered = {d.pk for d in item.related_documents.all()} | {item.source_document_id}
        if ids <= covered:
            return True
    return False
