"""Creating a document with its first version.

This is the bottom of the write path: it assumes validation, policy and the
safety scan already happened (remember.py, promote.py, the seed).
"""

import functools
import logging
import os
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from django.contrib.auth.models import AbstractBaseUser
from django.db import DEFAULT_DB_ALIAS, IntegrityError, connection, transaction
from django.db.models.constants import OnConflict

from memory_app.embeddings import document_text, embed_text, get_backend, usable_cores
from memory_app.hashing import sha256_text
from memory_app.models import ChangeKind, MemoryDocument, MemoryStore, MemoryVersion
from memory_app.services.versions import SourceRef, version_append

logger = logging.getLogger(__name__)


def document_insert(
    *,
    store: MemoryStore,
    path: str,
    title: str,
    content: str,
    trust: str,
    author: AbstractBaseUser | None,
    recall_hint: str = "",
    doc_type: str = "note",
    tags: Iterable[str] = (),
    entities: dict | None = None,
    always_inject: bool = False,
    importance: int = 5,
    expires_at: datetime | None = None,
    on_behalf_of: AbstractBaseUser | None = None,
    run_id: str = "",
    source_refs: Iterable[SourceRef] = (),
    scanner_version: str = "",
    findings: list | None = None,
    change: str = ChangeKind.CREATE,
    embedding: np.ndarray | None = None,
    promoted_from: MemoryVersion | None = None,
    reason: str = "",
) -> MemoryDocument | None:
    """Insert the head and version 1, unless (store, path) is taken: then
    write nothing and return None.

    A taken path is no error here (ON CONFLICT DO NOTHING), so a writer
    racing for a path needs no savepoint to keep its transaction usable:
    two statements fewer than catching the IntegrityError. Run it inside
    the caller's transaction.
    """
    document = MemoryDocument(
        store=store,
        path=path,
        title=title,
        recall_hint=recall_hint,
        content=content,
        content_sha256=sha256_text(content),
        version=1,
        doc_type=doc_type,
        trust=trust,
        always_inject=always_inject,
        tags=sorted(set(tags)),
        entities=entities or {},
        importance=importance,
        expires_at=expires_at,
        created_by=author,
        promoted_from=promoted_from,
        embedding=embedding,
        embedding_model=get_backend().model_id if embedding is not None else "",
    )
    meta = MemoryDocument._meta
    inserted = MemoryDocument._base_manager._insert(
        [document],
        fields=[field for field in meta.local_concrete_fields if not field.generated],
        returning_fields=[meta.pk],
        on_conflict=OnConflict.IGNORE,
    )
    if not inserted:
        return None
    document._state.adding = False
    document._state.db = DEFAULT_DB_ALIAS
    version_append(
        document=document,
        change=change,
        author=author,
        on_behalf_of=on_behalf_of,
        run_id=run_id,
        reason=reason,
        source_refs=source_refs,
        scanner_version=scanner_version,
        findings=findings,
    )
    return document


@transaction.atomic
def document_create(**fields) -> MemoryDocument:
    """document_insert (same arguments) for a path the caller expects free.

    Raises IntegrityError when (store, path) is taken.
    """
    document = document_insert(**fields)
    if document is None:
        raise IntegrityError(f"The path {fields['path']!r} is taken in its store.")
    return document


@dataclass(frozen=True)
class WriteResult:
    document: MemoryDocument
    outcome: str  # created | updated | deduplicated | unchanged

    @property
    def created(self) -> bool:
        return self.outcome == "created"


def embedding_for(title: str, recall_hint: str, content: str) -> np.ndarray | None:
    """The document's embedding, or None when the model cannot run.

    A write never fails for want of a vector: full-text search still finds
    the document, and the embed job fills the gap later.
    """
    try:
        return embed_text(document_text(title, recall_hint, content))
    except Exception:
        logger.exception("embedding failed; the embed job will retry")
        return None


def embedding_soon(title: str, recall_hint: str, content: str) -> Future[np.ndarray | None]:
    """`embedding_for` on a thread of its own, so that a write scans its
    text and counts its quota while the model runs (the model releases the
    GIL; it took about half of a write's 16 ms, docs/benchmarks.md)."""
    return _embedding_threads(os.getpid()).submit(embedding_for, title, recall_hint, content)


@functools.cache
def _embedding_threads(pid: int) -> ThreadPoolExecutor:
    """One pool per process (by `pid`): a forked worker never inherits
    its parent's threads, which do not exist in the child."""
    return ThreadPoolExecutor(usable_cores(), thread_name_prefix="write-embedding")


def vector_holds(
    document: MemoryDocument | None, title: str, recall_hint: str, content: str
) -> bool:
    """Whether `document` already holds the vector of this text: its
    embedded fields are these and its vector is the current model's. A
    write that leaves them as they are (a re-save, a metadata change) then
    needs no model call; if the text moves before the write locks the row,
    head_update clears the vector and the embed job computes it."""
    return (
        document is not None
        and document.embedding is not None
        and document.embedding_model == get_backend().model_id
        and (document.title, document.recall_hint, document.content)
        == (title, recall_hint, content)
    )


def hold_store_for_new_document(store: MemoryStore) -> None:
    """Lock the store's new documents until the transaction ends.

    A writer that looks for a document (at a path, or a near-duplicate)
    and creates one when it finds none reads what is committed: two such
    writers would both find nothing and both create, the second failing on
    the path or adding a duplicate. Under this lock the second waits, then
    finds the first's document. Only writes that may create one take it.
    """
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(hashtext('memory_store_insert'), %s)", [store.pk]
        )


def head_update(
    document: MemoryDocument,
    *,
    change: str,
    author: AbstractBaseUser | None,
    fields: dict,
    embedding: np.ndarray | None = None,
    force: bool = False,
    **version_kwargs,
) -> bool:
    """Move a locked document's head to `fields` and record the version.

    Returns False, writing nothing, when nothing would change, unless
    `force` asks for a version anyway (a redaction's record in the chain).
    """
    changed = {name: value for name, value in fields.items() if getattr(document, name) != value}
    if not changed and not force:
        return False
    for name, value in changed.items():
        setattr(document, name, value)
    # Only the columns that move are written: the ORM prepares each column
    # it writes (the vector's text alone is 7 kB), and the head's other
    # columns are as the lock read them.
    written = {*changed, "version", "updated_at"}
    if "content" in changed:
        document.content_sha256 = sha256_text(document.content)
        written.add("content_sha256")
    if embedding is not None:
        document.embedding = embedding
        document.embedding_model = get_backend().model_id
        written |= {"embedding", "embedding_model"}
    elif {"title", "recall_hint", "content"} & changed.keys():
        document.embedding = None
        document.embedding_model = ""
        written |= {"embedding", "embedding_model"}
    document.version += 1
    document.save(update_fields=written)
    version_append(document=document, change=change, author=author, **version_kwargs)
    return True
