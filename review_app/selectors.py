"""What the review pages show, fetched in a fixed number of queries."""

from dataclasses import dataclass

from django.db.models import Count, Prefetch, Q

from memory_app.models import DreamReviewItem, MemoryDocument, MemoryUsage, ReviewStatus
from memory_app.policy import curatable_stores_q
from memory_app.selectors.review import review_items
from memory_app.services.promote import DECIDED_HERE
from review_app.diffs import Diff, build_diff


@dataclass
class QueueRow:
    item: DreamReviewItem
    current: MemoryDocument | None
    diff: Diff
    injections: int
    hits: int


def queue_rows(items: list[DreamReviewItem]) -> list[QueueRow]:
    """Each item with what its target path holds now and its draft's usage."""
    if not items:
        return []
    targets = Q(pk__in=[])
    for item in items:
        targets |= Q(store_id=item.target_store_id, path=item.target_path)
    current = {
        (d.store_id, d.path): d
        for d in MemoryDocument.objects.filter(targets).only("id", "store_id", "path", "content")
    }
    usage = {
        row["document_id"]: row
        for row in MemoryUsage.objects.filter(document_id__in=[i.source_document_id for i in items])
        .values("document_id")
        .annotate(injections=Count("id"), hits=Count("id", filter=Q(hit=True)))
    }
    rows = []
    for item in items:
        target = current.get((item.target_store_id, item.target_path))
        stats = usage.get(item.source_document_id, {})
        rows.append(
            QueueRow(
                item=item,
                current=target,
                diff=build_diff(target.content if target else None, item.proposed_content),
                injections=stats.get("injections", 0),
                hits=stats.get("hits", 0),
            )
        )
    return rows


def pending_promotions():
    """Open proposals, with the documents each one relates to: the most
    similar memory at the target (promote), the cluster (merge), or the
    reviewed document it would replace (supersede)."""
    related = MemoryDocument.objects.select_related("store").only(
        "id", "path", "title", "store__slug"
    )
    return (
        review_items(action=DECIDED_HERE, status=ReviewStatus.PENDING)
        .select_related("source_document__store__conversation")
        .prefetch_related(Prefetch("related_documents", queryset=related))
    )


def pending_count() -> int:
    return DreamReviewItem.objects.filter(
        action__in=DECIDED_HERE, status=ReviewStatus.PENDING
    ).count()


def deletion_requests_for(user):
    """Open deletion requests this person may decide, oldest first."""
    return (
        review_items(action="tombstone", status=ReviewStatus.PENDING)
        .filter(curatable_stores_q(user, prefix="target_store__"))
        .select_related("source_document")
        .distinct()
    )
