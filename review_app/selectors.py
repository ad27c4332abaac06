"""What the review pages show, fetched in a fixed number of queries."""

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Min, Prefetch, Q

from memory_app.access import store_ref
from memory_app.models import DreamReviewItem, MemoryDocument, MemoryUsage, ReviewStatus
from memory_app.policy import curatable_stores_q
from memory_app.selectors.review import review_items
from memory_app.services.promote import DECIDED_HERE
from review_app.diffs import DiffRow, side_by_side
from review_app.provenance import Provenance, of_version, version_refs


@dataclass
class QueueRow:
    item: DreamReviewItem
    current: MemoryDocument | None
    diff: list[DiffRow]
    injections: int
    hits: int
    meta: Provenance | None = None
    draft_ref: str = ""


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
    refs = version_refs(item.source_version for item in items)
    rows = []
    for item in items:
        target = current.get((item.target_store_id, item.target_path))
        stats = usage.get(item.source_document_id, {})
        draft = item.source_document
        rows.append(
            QueueRow(
                item=item,
                current=target,
                diff=side_by_side(target.content if target else "", item.proposed_content),
                injections=stats.get("injections", 0),
                hits=stats.get("hits", 0),
                meta=_proposed(item, refs),
                draft_ref=f"{store_ref(draft.store)}/{draft.path}" if draft else "",
            )
        )
    return rows


def _proposed(item: DreamReviewItem, refs: dict) -> Provenance | None:
    """The proposed draft version's metadata, and who approved it if decided."""
    if item.source_version is None:
        return None
    approved = item.status == ReviewStatus.APPROVED and item.decided_by
    return of_version(
        item.source_version,
        refs.get(item.source_version_id, []),
        approved_by=item.decided_by.get_username() if approved else "",
    )


def pending_promotions():
    """Open proposals, with the documents each one relates to: the most
    similar memory at the target (promote), the cluster (merge), or the
    reviewed document it would replace (supersede)."""
    related = MemoryDocument.objects.select_related("store").only(
        "id", "path", "title", "store__slug"
    )
    return (
        review_items(action=DECIDED_HERE, status=ReviewStatus.PENDING)
        .select_related(
            "source_document__store__conversation",
            "source_document__store__owner",
            "source_document__store__system",
        )
        .prefetch_related(Prefetch("related_documents", queryset=related))
    )


def _pending():
    return DreamReviewItem.objects.filter(action__in=DECIDED_HERE, status=ReviewStatus.PENDING)


def pending_count() -> int:
    return _pending().count()


def pending_count_and_oldest() -> tuple[int, datetime | None]:
    figures = _pending().aggregate(count=Count("id"), oldest=Min("created_at"))
    return figures["count"], figures["oldest"]


def deletion_requests_for(user):
    """Open deletion requests this person may decide, oldest first."""
    return (
        review_items(action="tombstone", status=ReviewStatus.PENDING)
        .filter(curatable_stores_q(user, prefix="target_store__"))
        .select_related("source_document")
        .distinct()
    )
