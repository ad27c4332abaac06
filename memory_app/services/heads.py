"""A document's head with what a write reads of its history.

A write that moves a head reads three things: the row, the head version's
source refs (kept when the caller sends none) and the head version's
hashes (the next version chains to them). Here they are one statement,
its row built without the ORM's compiling, read before the write's
transaction (to scan what the write will keep) and again under the row's
lock: on memory_remember's update and merge paths three round trips and
about 1 ms of Python fewer, on memory_patch two round trips
(docs/benchmarks.md, "memory_remember in fewer statements").
"""

from dataclasses import dataclass

from django.db import connection

from memory_app.models import MemoryDocument, MemorySourceRef, MemoryVersion
from memory_app.selectors.candidates import TABLE, Columns
from memory_app.services.versions import ChainLink, SourceRef, head_link, head_source_refs

# Every column a write may keep or move; the generated full-text column
# (PostgreSQL computes it from the text) is never read.
_DOCUMENT = Columns(
    tuple(f.attname for f in MemoryDocument._meta.concrete_fields if not f.generated)
)
_QUOTE = connection.ops.quote_name
_SELECT = (
    f"SELECT {', '.join(f'd.{_QUOTE(f.column)}' for f in _DOCUMENT.fields)}, "  # noqa: S608 - names from the models
    "v.version, v.sha256, v.chain_sha256, "
    f"(SELECT coalesce(json_agg(json_build_array(r.kind, r.ref) ORDER BY r.id), '[]') "
    f"FROM {MemorySourceRef._meta.db_table} r WHERE r.version_id = v.id) "
    f"FROM {TABLE} d LEFT JOIN LATERAL ("
    f"SELECT id, version, sha256, chain_sha256 FROM {MemoryVersion._meta.db_table} "
    f"WHERE document_id = d.id AND version <= d.version ORDER BY version DESC LIMIT 1) v ON true "
)


@dataclass(frozen=True)
class Head:
    document: MemoryDocument
    # The head version's evidence and hashes, as read with the row.
    refs: list[SourceRef]
    link: ChainLink


def head_at(store_id: int, path: str, *, lock: bool = False) -> Head | None:
    """The document at `path` in the store, or None; with `lock`, locked
    until the transaction ends."""
    return _read("d.store_id = %s AND d.path = %s", [store_id, path], lock=lock)


def head_locked_by_id(document_id: int) -> Head:
    """The document with this id, locked until the transaction ends."""
    head = _read("d.id = %s", [document_id], lock=True)
    if head is None:
        raise MemoryDocument.DoesNotExist(document_id)
    return head


def _read(condition: str, params: list, *, lock: bool) -> Head | None:
    with connection.cursor() as cursor:
        cursor.execute(f"{_SELECT} WHERE {condition}{' FOR UPDATE OF d' if lock else ''}", params)
        row = cursor.fetchone()
    if row is None:
        return None
    width = len(_DOCUMENT.fields)
    document = _DOCUMENT.document(row[:width])
    # The driver decodes `json` (Django leaves only `jsonb` as text).
    version, sha256, chain, refs = row[width:]
    if version != document.version:
        # A writer moved the head while this one waited for the lock: the
        # row was read again as it committed, the history's rows were not
        # (they come from the statement's snapshot). Read them again.
        return Head(document, head_source_refs(document), head_link(document))
    return Head(document, [SourceRef(kind, ref) for kind, ref in refs], ChainLink(sha256, chain))
