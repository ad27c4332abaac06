"""What the memory browser lists: stores, folders under a path prefix, and
documents, filtered or searched. Every query starts from what the person
may read (memory_app.access), so a filter naming another store finds nothing.
"""

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.core.paginator import Page
from django.db.models import (
    BooleanField,
    CharField,
    Count,
    ExpressionWrapper,
    F,
    Func,
    Q,
    QuerySet,
    Value,
)
from django.db.models.functions import Substr
from django.http import Http404

from memory_app.access import documents_readable, stores_readable, unexpired_q
from memory_app.models import LIVE_STATES, DocState, MemoryDocument, MemoryStore
from memory_app.selectors.search import OVERFETCH, Scored, hybrid_candidates, rerank
from review_app.links import link_each
from review_app.pagination import Pager

STORE_LIMIT = 200
SEARCH_LIMIT = 50
PAGE_SIZE = 50
SCOPE_ORDER = {"workspace": 0, "system": 1, "user": 2, "conversation": 3}


@dataclass(frozen=True)
class Folder:
    name: str
    prefix: str
    documents: int


def browser_stores(user: AbstractBaseUser, scope: str = "") -> list[MemoryStore]:
    """Readable stores with their active document counts, scope by scope
    (an expired document is no longer counted as active).

    Capped: someone in thousands of conversations narrows by scope instead.
    """
    stores = stores_readable(user).select_related("owner", "system", "conversation")
    if scope:
        stores = stores.filter(scope=scope)
    active = Q(documents__state=DocState.ACTIVE) & unexpired_q("documents__")
    stores = stores.annotate(active=Count("documents", filter=active)).order_by("-created_at")[
        :STORE_LIMIT
    ]
    return sorted(stores, key=lambda s: (SCOPE_ORDER.get(s.scope, 9), s.slug))


def browser_store(user: AbstractBaseUser, store_id: int) -> MemoryStore:
    """The store a filter names, if the person may read it; otherwise 404."""
    store = (
        stores_readable(user)
        .select_related("owner", "system", "conversation")
        .filter(pk=store_id)
        .first()
    )
    if store is None:
        raise Http404("No such store.")
    return store


def browser_documents(user: AbstractBaseUser, filters: dict) -> QuerySet[MemoryDocument]:
    """Readable documents narrowed by the browser's filters (all optional).

    A live state (active, constrained) holds no expired document: the API's
    lists and search leave those out before the expiry job tombstones them.
    """
    documents = documents_readable(user)
    if filters.get("store"):
        documents = documents.filter(store_id=filters["store"])
    if filters.get("scope"):
        documents = documents.filter(store__scope=filters["scope"])
    if filters.get("prefix"):
        documents = documents.filter(path__startswith=filters["prefix"])
    for field in ("trust", "state", "doc_type"):
        if filters.get(field):
            documents = documents.filter(**{field: filters[field]})
    if filters.get("state") in LIVE_STATES:
        documents = documents.filter(unexpired_q())
    if filters.get("tag"):
        documents = documents.filter(tags__contains=[filters["tag"]])
    return documents


def _expired() -> Q:
    """Past its expiry in a live state: shown as expired, not as active, until
    the expiry job tombstones it."""
    return Q(state__in=LIVE_STATES) & ~unexpired_q()


def browser_listing(documents: QuerySet[MemoryDocument]) -> QuerySet[MemoryDocument]:
    """The documents in listing order, each marked `expired` (`_expired`)."""
    return (
        documents.annotate(expired=ExpressionWrapper(_expired(), output_field=BooleanField()))
        .select_related("store__owner", "store__system", "store__conversation")
        .defer("content", "recall_hint", "embedding", "search_vector", "entities")
        .order_by("store__slug", "path")
    )


def browser_page(documents: QuerySet[MemoryDocument], number: object) -> Page:
    """One page of the listing, each document with the `url` of its page."""
    page = Pager(browser_listing(documents), PAGE_SIZE).get_page(number)
    page.object_list = link_each(list(page.object_list), "review:document")
    return page


def browser_folders(documents: QuerySet[MemoryDocument], prefix: str) -> list[Folder]:
    """The next path segment under `prefix` that holds documents, with counts."""
    rest = Substr("path", len(prefix) + 1)
    rows = (
        documents.annotate(rest=rest)
        .filter(rest__contains="/")
        .annotate(
            segment=Func(
                F("rest"), Value("/"), Value(1), function="split_part", output_field=CharField()
            )
        )
        .values("segment")
        .annotate(n=Count("id"))
        .order_by("segment")
    )
    return [Folder(r["segment"], f"{prefix}{r['segment']}/", r["n"]) for r in rows]


def browser_search(
    user: AbstractBaseUser, documents: QuerySet[MemoryDocument], query: str
) -> list[Scored]:
    """The best matches among the filtered documents, ranked as memory_search
    ranks, each marked `expired` as the listing marks it (`_expired`)."""
    scope = {
        store.pk: store
        for store in stores_readable(user).select_related("owner", "system", "conversation")
    }
    candidates = hybrid_candidates(
        documents, query, scope=scope, k=SEARCH_LIMIT * OVERFETCH // 2, mode="hybrid"
    )
    hits = rerank(candidates, query, "hybrid")[:SEARCH_LIMIT]
    found = [hit.document for hit in hits]
    link_each(found, "review:document")
    if found:
        expired = set(
            documents.filter(_expired(), pk__in=[document.pk for document in found]).values_list(
                "pk", flat=True
            )
        )
        for document in found:
            document.expired = document.pk in expired
    return hits


def path_crumbs(prefix: str) -> list[Folder]:
    """Breadcrumbs for a path prefix: one per folder on the way down."""
    crumbs, so_far = [], ""
    for part in [p for p in prefix.split("/") if p]:
        so_far += f"{part}/"
        crumbs.append(Folder(part, so_far, 0))
    return crumbs
