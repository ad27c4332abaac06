"""What the review pages show, fetched in a fixed number of queries."""

from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Count, F, Min, Q
from pgvector.django import CosineDistance

from memory_app.access import store_ref, unexpired_q
from memory_app.models import (
    DocState,
    DreamReviewItem,
    MemoryDocument,
    MemoryStore,
    MemoryUsage,
    ReviewAction,
    ReviewStatus,
)
from memory_app.policy import curatable_stores_q
from memory_app.selectors.review import TARGET_STORE_SELECT, review_items
from memory_app.services.promote import DECIDED_HERE, SIMILAR_MIN
from review_app.diffs import Diff, build_diff
from review_app.links import link_each, link_to
from review_app.provenance import Provenance, of_version, version_refs

# What naming a store reads (MemoryStore.label, store_ref).
STORE_NAME_FIELDS = (
    "scope",
    "slug",
    "owner__username",
    "system__slug",
    "conversation__external_id",
)
# What a card shows of a related document: its path, title and store's label.
RELATED_FIELDS = ("id", "path", "title", *(f"store__{name}" for name in STORE_NAME_FIELDS))
RELATED_STORE = tuple(
    f"memorydocument__store__{name}" for name in ("owner", "system", "conversation")
)
TARGET_STORE_FIELDS = tuple(f"target_store__{name}" for name in STORE_NAME_FIELDS)
# What a queue card reads of an item and the rows joined to it. The rest (the
# draft's and the version's content, vectors and hashes, the people's
# password hashes) made up most of the page's query time and row building.
CARD_FIELDS = (
    "action",
    "status",
    "target_store",
    "target_path",
    "proposed_title",
    "proposed_content",
    "rationale",
    "findings",
    "run_id",
    "decided_at",
    "decision_note",
    "created_at",
    "source_document__path",
    "source_document__store",
    "source_version__metadata",
    "source_version__recall_hint",
    "source_version__author_name",
    "proposed_by__username",
    "decided_by__username",
)
# Tabs whose items are decided: listed newest decision first.
DECIDED_TABS = (ReviewStatus.APPROVED, ReviewStatus.REJECTED)


@dataclass
class QueueRow:
    """An item and what its card shows, links included: worked out here once
    per card, the card template only places them (see review_app.links)."""

    item: DreamReviewItem
    current: MemoryDocument | None
    diff: Diff
    injections: int
    hits: int
    decide_url: str
    content_url: str
    current_url: str = ""
    draft_url: str = ""
    proposer: str = ""
    conversation: str = ""
    meta: Provenance | None = None
    draft_ref: str = ""
    related: list[MemoryDocument] = field(default_factory=list)


def queue_rows(items: list[DreamReviewItem]) -> list[QueueRow]:
    """Each item with what its target path holds now, its draft's usage and
    the documents it relates to: memory similar to a promotion, the
    documents a merge or supersession covers."""
    if not items:
        return []
    name_stores(items)
    current = _current_documents(items)
    usage = {
        row["document_id"]: row
        for row in MemoryUsage.objects.filter(document_id__in=[i.source_document_id for i in items])
        .values("document_id")
        .annotate(injections=Count("id"), hits=Count("id", filter=Q(hit=True)))
    }
    refs = version_refs(item.source_version for item in items)
    promotions = [item.pk for item in items if item.action == ReviewAction.PROMOTE]
    related = similar_memory(promotions) | covered_documents(
        [item.pk for item in items if item.action != ReviewAction.PROMOTE]
    )
    for documents in related.values():
        link_each(documents, "review:document")
    decide, content = link_to("review:queue-decide"), link_to("review:queue-content")
    document_url = link_to("review:document")
    rows = []
    for item in items:
        target = current.get((item.target_store_id, item.target_path))
        stats = usage.get(item.source_document_id, {})
        draft = item.source_document
        conversation = draft.store.conversation if draft else None
        rows.append(
            QueueRow(
                item=item,
                current=target,
                diff=build_diff(target.content if target else None, item.proposed_content),
                injections=stats.get("injections", 0),
                hits=stats.get("hits", 0),
                decide_url=decide(item.pk),
                content_url=content(item.pk),
                current_url=document_url(target.pk) if target else "",
                draft_url=document_url(draft.pk) if draft else "",
                proposer=item.proposed_by.get_username() if item.proposed_by else "a dream job",
                conversation=conversation.external_id if conversation else "",
                meta=_proposed(item, refs),
                draft_ref=f"{store_ref(draft.store)}/{draft.path}" if draft else "",
                related=related.get(item.pk, []),
            )
        )
    return rows


def name_stores(items: list[DreamReviewItem]) -> None:
    """Sets each item's target store and its draft's store, with what naming
    them reads, from one query: a page's items name a handful of stores."""
    wanted = {item.target_store_id for item in items} | {
        item.source_document.store_id for item in items if item.source_document
    }
    stores = {
        store.pk: store
        for store in MemoryStore.objects.filter(pk__in=wanted - {None})
        .select_related("owner", "system", "conversation")
        .only(*STORE_NAME_FIELDS)
    }
    for item in items:
        if item.target_store_id is not None:
            item.target_store = stores[item.target_store_id]
        if item.source_document is not None:
            item.source_document.store = stores[item.source_document.store_id]


def _current_documents(items: list[DreamReviewItem]) -> dict[tuple, MemoryDocument]:
    """What each item's target path holds now, by (store id, path).

    One condition per target store, with its paths in one IN list: a page of
    items aims at a few stores, and compiling one OR-ed (store, path) pair
    per item cost more than running the query."""
    paths: dict[object, set[str]] = {}
    for item in items:
        paths.setdefault(item.target_store_id, set()).add(item.target_path)
    targets = Q(pk__in=[])
    for store_id, store_paths in paths.items():
        targets |= Q(store_id=store_id, path__in=sorted(store_paths))
    documents = MemoryDocument.objects.filter(targets).only("id", "store_id", "path", "content")
    return {(document.store_id, document.path): document for document in documents}


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
    diff shows that one) are never listed, nor is one no longer active and
    unexpired, as the proposal chose them (`similar_in`): deleted or expired
    since, it is not "already in" the store."""
    if not item_ids:
        return {}
    links = (
        DreamReviewItem.related_documents.through.objects.filter(
            unexpired_q("memorydocument__"),
            dreamreviewitem_id__in=item_ids,
            memorydocument__state=DocState.ACTIVE,
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
        .select_related(*RELATED_STORE)
        .only(*(f"memorydocument__{name}" for name in RELATED_FIELDS), "dreamreviewitem")
        .order_by("dreamreviewitem_id", "-similarity")
    )
    similar: dict[object, list[MemoryDocument]] = {}
    for link in links:
        link.memorydocument.similarity = link.similarity
        similar.setdefault(link.dreamreviewitem_id, []).append(link.memorydocument)
    return similar


def covered_documents(item_ids: list) -> dict[object, list[MemoryDocument]]:
    """For each merge or supersession, the documents it covers, by path.
    Asked only when the page holds such items: most pages hold promotions
    alone."""
    if not item_ids:
        return {}
    links = (
        DreamReviewItem.related_documents.through.objects.filter(dreamreviewitem_id__in=item_ids)
        .select_related(*RELATED_STORE)
        .only(*(f"memorydocument__{name}" for name in RELATED_FIELDS), "dreamreviewitem")
        .order_by("dreamreviewitem_id", "memorydocument__path")
    )
    covered: dict[object, list[MemoryDocument]] = {}
    for link in links:
        covered.setdefault(link.dreamreviewitem_id, []).append(link.memorydocument)
    return covered


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
    ones newest decision first. Only what a card shows is fetched;
    queue_rows adds the rest, a query per kind for the whole page."""
    items = (
        _proposals(**filters)
        .filter(status=status)
        # The stores are named apart (see name_stores): six more joins here
        # took PostgreSQL longer to plan than the page's queries took to run.
        .select_related(None)
        .select_related("source_document", "source_version", "proposed_by", "decided_by")
        .only(*CARD_FIELDS)
    )
    if status in DECIDED_TABS:
        items = items.order_by("-decided_at", "-id")
    return items


def queue_item_content():
    """Queue items (any tab) with what their content page shows."""
    return (
        _proposals()
        .select_related(None)
        .select_related(*TARGET_STORE_SELECT)
        .only("proposed_title", "proposed_content", "target_path", *TARGET_STORE_FIELDS)
    )


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


def deletion_requests_for(user, *, open_only: bool = True):
    """Open deletion requests this person may decide, oldest first; with
    `open_only` False, those decided already too."""
    status = ReviewStatus.PENDING if open_only else None
    return (
        review_items(action="tombstone", status=status)
        .filter(curatable_stores_q(user, prefix="target_store__"))
        .select_related("source_document")
        .distinct()
    )
