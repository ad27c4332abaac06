"""What the review pages show, fetched in a fixed number of queries."""

from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Count, F, Min, Prefetch, Q
from pgvector.django import CosineDistance

from memory_app.access import store_ref
from memory_app.models import (
    DreamReviewItem,
    MemoryDocument,
    MemoryUsage,
    ReviewAction,
    ReviewStatus,
)
from memory_app.policy import curatable_stores_q
from memory_app.selectors.review import review_items
from memory_app.services.promote import DECIDED_HERE, SIMILAR_MIN
from review_app.diffs import Diff, build_diff
from review_app.provenance import Provenance, of_version, version_refs

RELATED_FIELDS = ("id", "path", "title", "store__slug")
# Tabs whose items are decided: listed newest decision first.
DECIDED_TABS = (ReviewStatus.APPROVED, ReviewStatus.REJECTED)


@dataclass
class QueueRow:
    item: DreamReviewItem
    current: MemoryDocument | None
    diff: Diff
    injections: int
    hits: int
    meta: Provenance | None = None
    draft_ref: str = ""
    related: list[MemoryDocument] = field(default_factory=list)


def queue_rows(items: list[DreamReviewItem]) -> list[QueueRow]:
    """Each item with what its target path holds now, its draft's usage and
    the documents it relates to."""
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
    similar = similar_memory([i.pk for i in items if i.action == ReviewAction.PROMOTE])
    rows = []
    for item in items:
        target = current.get((item.target_store_id, item.target_path))
        stats = usage.get(item.source_document_id, {})
        draft = item.source_document
        rows.append(
            QueueRow(
                item=item,
                current=target,
                diff=build_diff(target.content if target else None, item.proposed_content),
                injections=stats.get("injections", 0),
                hits=stats.get("hits", 0),
                meta=_proposed(item, refs),
                draft_ref=f"{store_ref(draft.store)}/{draft.path}" if draft else "",
                related=similar.get(item.pk, [])
                if item.action == ReviewAction.PROMOTE
                else list(item.related_documents.all()),
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


def similar_memory(item_ids: list) -> dict[object, list[MemoryDocument]]:
    """For each promotion, the related documents at least SIMILAR_MIN similar
    to its draft (cosine, by pgvector), most similar first, each with a
    `similarity`. The draft itself and the document at the target path (the
    diff shows that one) are never listed."""
    if not item_ids:
        return {}
    links = (
        DreamReviewItem.related_documents.through.objects.filter(
            dreamreviewitem_id__in=item_ids,
            # Vectors of two models do not compare.
            memorydocument__embedding_model=F("dreamreviewitem__source_document__embedding_model"),
        )
        .exclude(memorydocument_id=F("dreamreviewitem__source_document_id"))
        .exclude(
            memorydocument__store_id=F("dreamreviewitem__target_store_id"),
            memorydocument__path=F("dreamreviewitem__target_path"),
        )
        .annotate(
            similarity=1
            - CosineDistance(
                "memorydocument__embedding", F("dreamreviewitem__source_document__embedding")
            )
        )
        .filter(similarity__gte=SIMILAR_MIN)
        .select_related("memorydocument__store")
        .only(*(f"memorydocument__{name}" for name in RELATED_FIELDS), "dreamreviewitem")
        .order_by("dreamreviewitem_id", "-similarity")
    )
    similar: dict[object, list[MemoryDocument]] = {}
    for link in links:
        link.memorydocument.similarity = link.similarity
        similar.setdefault(link.dreamreviewitem_id, []).append(link.memorydocument)
    return similar


def _proposals(*, store: str = "", proposer: str = "", run: str = "", action: str = ""):
    items = review_items(action=action or DECIDED_HERE)
    if store:
        items = items.filter(target_store__slug=store)
    if proposer:
        items = items.filter(proposed_by__username=proposer)
    if run:
        items = items.filter(run_id=run)
    return items


def queue_items(*, status: str = ReviewStatus.PENDING, **filters: str):
    """One tab of the queue narrowed by the filters (target store slug,
    proposer username, run id, action). Open items oldest first, decided
    ones newest decision first; merges and supersessions come with the
    documents they cover."""
    related = MemoryDocument.objects.select_related("store").only(*RELATED_FIELDS)
    items = (
        _proposals(**filters)
        .filter(status=status)
        .select_related(
            "source_document__store__conversation",
            "source_document__store__owner",
            "source_document__store__system",
        )
        # No card shows the draft's vectors: fetching them made up most of the page's query time.
        .defer("source_document__embedding", "source_document__search_vector")
        .prefetch_related(Prefetch("related_documents", queryset=related))
    )
    if status in DECIDED_TABS:
        items = items.order_by("-decided_at", "-id")
    return items


def queue_tab_counts(**filters: str) -> dict[str, int]:
    """How many items each tab holds under the same filters, in one query."""
    counts = _proposals(**filters).order_by().values_list("status").annotate(n=Count("id"))
    return dict(counts)


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
