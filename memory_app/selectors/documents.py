"""Reads of documents and their history, always through access.py."""

import base64
import binascii

from django.db.models import Prefetch, QuerySet

from memory_app.access import STORE_SELECT, access_store, documents_readable, live_q
from memory_app.actors import Actor
from memory_app.errors import InvalidInput, NotFound
from memory_app.models import MemoryDocument, MemorySourceRef, MemoryVersion

SUMMARY_FIELDS = (
    "id",
    "store",
    "path",
    "title",
    "doc_type",
    "trust",
    "state",
    "always_inject",
    "version",
    "updated_at",
)


def encode_cursor(path: str) -> str:
    return base64.urlsafe_b64encode(path.encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> str:
    """The path a cursor holds. One this API wrote holds a valid path; a
    crafted one may hold anything, and a NUL, which PostgreSQL's text cannot
    carry, had answered 500."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        path = base64.b64decode(padded, altchars=b"-_", validate=True).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        path = None
    if path is None or "\x00" in path:
        raise InvalidInput("Not a cursor from this API.", fields={"cursor": ["Invalid."]})
    return path


def documents_list(
    *,
    actor: Actor,
    store: str,
    prefix: str = "",
    limit: int = 50,
    cursor: str | None = None,
    include_inactive: bool = False,
) -> tuple[list[MemoryDocument], str | None]:
    """A page of a store's documents by path, and the cursor of the next page.

    Keyset pagination on (store, path): pages stay fast and stable while
    documents are added. A document past its expiry is inactive even before
    the expiry job marks it, as search and context already treat it.
    """
    target = access_store(actor, store)
    documents = documents_readable(actor.user).filter(store=target)
    if not include_inactive:
        documents = documents.filter(live_q())
    if prefix:
        documents = documents.filter(path__startswith=prefix)
    if cursor:
        documents = documents.filter(path__gt=decode_cursor(cursor))
    page = list(
        documents.select_related(*STORE_SELECT)
        .order_by("path")
        .only(*_summary_columns())[: limit + 1]
    )
    next_cursor = encode_cursor(page[limit - 1].path) if len(page) > limit else None
    return page[:limit], next_cursor


def _summary_columns() -> list[str]:
    return [
        *[name for name in SUMMARY_FIELDS if name != "store"],
        "store__slug",
        "store__scope",
        "store__owner__username",
        "store__system__slug",
        "store__conversation__external_id",
        "store__owner_id",
        "store__conversation_id",
        "store__system_id",
    ]


def _refs_prefetch() -> Prefetch:
    return Prefetch("source_refs", queryset=MemorySourceRef.objects.order_by("id"), to_attr="refs")


def document_version(document: MemoryDocument, number: int | None) -> MemoryVersion:
    """The head's version row (or an older one), with its source refs."""
    versions = MemoryVersion.objects.filter(document=document).prefetch_related(_refs_prefetch())
    version = versions.filter(version=number or document.version).first()
    if version is None:
        raise NotFound(f"The document has no version {number}.")
    return version


def document_history(document: MemoryDocument, *, limit: int = 50) -> QuerySet[MemoryVersion]:
    return (
        MemoryVersion.objects.filter(document=document)
        .select_related("author", "on_behalf_of")
        .prefetch_related(_refs_prefetch())
        .order_by("-version")[:limit]
    )
