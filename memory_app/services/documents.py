"""Creating a document with its first version.

This is the bottom of the write path: it assumes validation, policy and the
safety scan already happened (remember.py, promote.py, the seed).
"""

from collections.abc import Iterable
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from memory_app.hashing import sha256_text
from memory_app.models import ChangeKind, MemoryDocument, MemoryStore
from memory_app.services.versions import SourceRef, version_append


@transaction.atomic
def document_create(
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
) -> MemoryDocument:
    """Insert the head and version 1 in one transaction.

    Raises IntegrityError when (store, path) is taken; callers that race on
    a path catch it and retry as an update.
    """
    document = MemoryDocument.objects.create(
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
    )
    version_append(
        document=document,
        change=change,
        author=author,
        on_behalf_of=on_behalf_of,
        run_id=run_id,
        source_refs=source_refs,
        scanner_version=scanner_version,
        findings=findings,
    )
    return document
