"""What the memory browser lists: stores, folders under a path prefix, and
documents, filtered or searched. Every query starts from what the person
may read (memory_app.access), so a filter naming another store finds nothing.
"""

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.core.paginator import Page
from django.db.models import CharField, Count, F, Func, Q, QuerySet, Value
from django.db.models.functions import Substr
from django.http import Http404

from memory_app.access import documents_readable, stores_readable
from memory_app.models import DocState, MemoryDocument, MemoryStore
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
    """Readable stores with their active document counts, scope by scope.

    Capped: someone in thousands of conversations narrows by scope instead.
    """
    stores = stores_readable(user).select_related("owner", "system", "conversation")
    if scope:
        stores = stores.filter(scope=scope)
    stores = stores.annotate(
        active=Count("documents", filter=Q(documents__state=DocState.ACTIVE))
    ).order_by("-created_at")[:STORE_LIMIT]
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
    """Readable documents narrowed by the browser's filters (all optional)."""
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
    if filters.get("tag"):
        documents = documents.filter(tags__contains=[filters["tag"]])
    return documents


def browser_listing(documents: QuerySet[MemoryDocument]) -> QuerySet[MemoryDocument]:
    return (
        documents.select_related("store__owner", "store__system", "store__conversation")
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
    """The best matches among the filtered documents, ranked as memory_search ranks."""
    scope = {
        store.pk: store
        for store in stores_readable(user).select_related("owner", "system", "conversation")
    }
    candidates = hybrid_candidates(
        documents, query, scope=scope, k=SEARCH_LIMIT * OVERFETCH // 2, mode="hybrid"
    )
    hits = rerank(candidates, query, "hybrid")[:SEARCH_LIMIT]
    link_each([hit.document for hit in hits], "review:document")
    return hits


def path_crumbs(prefix: str) -> list[Folder]:
    """Breadcrumbs for a path prefix: one per folder on the way down."""
    crumbs, so_far = [], ""
    for part in [p for p in prefix.split("/") if p]:
        so_far += f"{part}/"
        crumbs.append(Folder(part, so_far, 0))
    return crumbs
