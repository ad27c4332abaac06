"""A document's head, locked for a write, with what the write reads of its history.

A write that moves a head reads three things once it holds the row's lock:
the row, the head version's source refs (kept when the caller sends none)
and the head version's hashes (the next version chains to them). Here they
are one statement, its row built without the ORM's compiling: two round
trips and about 1 ms of Python fewer on memory_remember's update and merge
paths (docs/benchmarks.md, "memory_remember's merge in fewer statements").
"""

import json
from dataclasses import dataclass

from django.db import connection

from memory_app.models import MemoryDocument, MemorySourceRef, MemoryVersion
from memory_app.selectors.candidates import Columns
from memory_app.selectors.sql import columns
from memory_app.services.versions import ChainLink, SourceRef, head_link, head_source_refs

_DOCUMENT = Columns(tuple(f.attname for f in MemoryDocument._meta.concrete_fields))
_SELECT = (
    f"SELECT {', '.join(columns(MemoryDocument, 'd'))}, v.version, v.sha256, v.chain_sha256, "  # noqa: S608 - names from the models
    f"(SELECT coalesce(json_agg(json_build_array(r.kind, r.ref) ORDER BY r.id), '[]') "
    f"FROM {MemorySourceRef._meta.db_table} r WHERE r.version_id = v.id) "
    f"FROM {MemoryDocument._meta.db_table} d LEFT JOIN LATERAL ("
    f"SELECT id, version, sha256, chain_sha256 FROM {MemoryVersion._meta.db_table} "
    f"WHERE document_id = d.id AND version <= d.version ORDER BY version DESC LIMIT 1) v ON true "
)


@dataclass(frozen=True)
class LockedHead:
    document: MemoryDocument
    # The head version's evidence and hashes, as the lock found them.
    refs: list[SourceRef]
    link: ChainLink


def head_locked_by_id(document_id: int) -> LockedHead:
    """The document with this id, locked until the transaction ends."""
    head = _locked("d.id = %s", [document_id])
    if head is None:
        raise MemoryDocument.DoesNotExist(document_id)
    return head


def head_locked_at(store_id: int, path: str) -> LockedHead | None:
    """The document at `path` in the store, locked, or None."""
    return _locked("d.store_id = %s AND d.path = %s", [store_id, path])


def _locked(condition: str, params: list) -> LockedHead | None:
    with connection.cursor() as cursor:
        cursor.execute(f"{_SELECT} WHERE {condition} FOR UPDATE OF d", params)
        row = cursor.fetchone()
    if row is None:
        return None
    width = len(_DOCUMENT.fields)
    document = _DOCUMENT.document(row[:width])
    version, sha256, chain, refs = row[width:]
    if version != document.version:
        # A writer moved the head while this one waited for the lock: the
        # row is re-read as it committed, the history's rows were not (they
        # come from the statement's snapshot). Read them again.
        return LockedHead(document, head_source_refs(document), head_link(document))
    if isinstance(refs, str):
        refs = json.loads(refs)
    return LockedHead(
        document, [SourceRef(kind, ref) for kind, ref in refs], ChainLink(sha256, chain)
    )
