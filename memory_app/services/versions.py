"""Appending to a document's immutable history."""

from collections.abc import Iterable
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from memory_app.hashing import GENESIS, chain_key_current, chain_sha256, record_sha256
from memory_app.models import MemoryDocument, MemorySourceRef, MemoryVersion

SYSTEM_ACTOR = "system"


@dataclass(frozen=True)
class SourceRef:
    kind: str
    ref: str


@dataclass(frozen=True)
class ChainLink:
    """A version's hashes: what the next version's chain is computed from."""

    sha256: str
    chain_sha256: str


def version_source_refs(*, document_id, version: int) -> list[SourceRef]:
    """The evidence recorded with one version of a document, in order."""
    refs = MemorySourceRef.objects.filter(
        version__document_id=document_id, version__version=version
    )
    return [SourceRef(kind, ref) for kind, ref in refs.order_by("id").values_list("kind", "ref")]


def head_source_refs(document: MemoryDocument) -> list[SourceRef]:
    """The head version's evidence: what a write that sends none keeps."""
    return version_source_refs(document_id=document.pk, version=document.version)


def link_below(document_id, version: int) -> ChainLink | None:
    """The hashes of the document's newest version numbered below `version`."""
    found = (
        MemoryVersion.objects.filter(document_id=document_id, version__lt=version)
        .order_by("-version")
        .values_list("sha256", "chain_sha256")
        .first()
    )
    return found and ChainLink(*found)


def head_link(document: MemoryDocument) -> ChainLink | None:
    """The hashes of the head's version: what the next version chains to."""
    return link_below(document.pk, document.version + 1)


def head_metadata(document: MemoryDocument) -> dict:
    """The head's fields besides text, as kept with each version for rollback."""
    return {
        "doc_type": document.doc_type,
        "trust": document.trust,
        "state": document.state,
        "always_inject": document.always_inject,
        "tags": list(document.tags),
        "entities": dict(document.entities),
        "importance": document.importance,
        "expires_at": document.expires_at.isoformat() if document.expires_at else None,
    }


def version_append(
    *,
    document: MemoryDocument,
    change: str,
    author: AbstractBaseUser | None,
    on_behalf_of: AbstractBaseUser | None = None,
    run_id: str = "",
    reason: str = "",
    source_refs: Iterable[SourceRef] = (),
    scanner_version: str = "",
    findings: list | None = None,
    previous: ChainLink | None = None,
) -> MemoryVersion:
    """Record the document's current head as its version `document.version`.

    The caller holds the document's row lock and has already moved the head;
    this writes the matching history row, chained to the one before it, and
    its source refs. `previous` is that version's link when the caller read
    it with the lock (locked_head.py); else it is read here. Must run inside
    the caller's transaction.
    """
    # A first version has nothing before it: no statement to find out.
    if previous is None and document.version > 1:
        previous = link_below(document.pk, document.version)
    created_at = timezone.now()
    author_name = author.get_username() if author is not None else SYSTEM_ACTOR
    key = chain_key_current()
    source_refs = list(source_refs)
    metadata = head_metadata(document)
    version = MemoryVersion.objects.create(
        document=document,
        version=document.version,
        change=change,
        title=document.title,
        recall_hint=document.recall_hint,
        content=document.content,
        sha256=document.content_sha256,
        parent_sha256=previous.sha256 if previous else "",
        chain_sha256=chain_sha256(
            key=key,
            previous_chain=previous.chain_sha256 if previous else GENESIS,
            version=document.version,
            change=change,
            content_sha256=document.content_sha256,
            author_name=author_name,
            created_at=created_at,
            record_sha256=record_sha256(
                title=document.title,
                recall_hint=document.recall_hint,
                reason=reason,
                run_id=run_id,
                metadata=metadata,
                source_refs=[(ref.kind, ref.ref) for ref in source_refs],
            ),
        ),
        chain_key_id=key.id,
        metadata=metadata,
        author=author,
        author_name=author_name,
        on_behalf_of=on_behalf_of,
        run_id=run_id,
        reason=reason,
        scanner_version=scanner_version,
        findings=findings or [],
        created_at=created_at,
    )
    MemorySourceRef.objects.bulk_create(
        MemorySourceRef(version=version, kind=ref.kind, ref=ref.ref) for ref in source_refs
    )
    return version
