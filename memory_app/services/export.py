"""Export: memory as JSON Lines, every document with its whole history.

Line 1 is a header; then one line per store; then one per document with
its head, every version (with source refs) and the review decisions about
it; then an end line counting the stores and documents before it, so a
file cut short at a line's end is told from a whole one (format version
2; version 1 had no end line). Embeddings are left out (they are derived:
the embed job recomputes them) and so are usage rows, traces and events
(telemetry, not memory).
The format is what `memory_import` reads back, and importing an export
reproduces it exactly. export_format.py gives each line's shape, which
the import holds every line to.
"""

import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime

from django.db.models import Prefetch, Q, QuerySet

from memory_app.access import store_named_q, store_ref
from memory_app.errors import InvalidInput
from memory_app.models import (
    DreamReviewItem,
    MemoryDocument,
    MemoryStore,
    MemoryVersion,
)
from memory_app.safety.registry import SCANNER_VERSION

FORMAT = "agent-memory-export"
FORMAT_VERSION = 2
BATCH = 200
# Named in the error for a store that does not exist; more are counted.
STORES_NAMED = 20


def documents_in_stores(names: list[str] | None) -> QuerySet[MemoryDocument]:
    """The documents of the stores with these names (every document for None):
    a slug (`system-payments-api`) or a name as the API and the export file
    write it (`system:payments-api`, `user:alice`, `conversation:conv-1`).

    InvalidInput names what no store answers to, with the slugs there are: a
    mistyped store would otherwise select nothing, silently.
    """
    documents = MemoryDocument.objects.all()
    if names is None:
        return documents
    queries = {name: store_named_q(name) or Q(slug=name) for name in names}
    stores = MemoryStore.objects.none()
    unknown = []
    for name, query in queries.items():
        found = MemoryStore.objects.filter(query)
        if found.exists():
            stores |= found
        else:
            unknown.append(name)
    if unknown:
        known = list(MemoryStore.objects.order_by("slug").values_list("slug", flat=True))
        listed = ", ".join(known[:STORES_NAMED])
        more = f" and {len(known) - STORES_NAMED} more" if len(known) > STORES_NAMED else ""
        raise InvalidInput(
            f"No store named {', '.join(sorted(unknown))}. Stores: {listed or 'none'}{more}."
        )
    return documents.filter(store__in=stores)


def _time(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def _name(user) -> str | None:
    return user.get_username() if user is not None else None


def _version_ref(version: MemoryVersion | None) -> list | None:
    return [str(version.document_id), version.version] if version is not None else None


def store_line(store: MemoryStore) -> dict:
    return {
        "type": "store",
        "ref": store_ref(store),
        "scope": store.scope,
        "name": store.name,
        "description": store.description,
        "participants": (
            sorted(u.get_username() for u in store.conversation.participants.all())
            if store.conversation_id
            else []
        ),
    }


def version_line(version: MemoryVersion) -> dict:
    return {
        "version": version.version,
        "change": version.change,
        "title": version.title,
        "recall_hint": version.recall_hint,
        "content": version.content,
        "sha256": version.sha256,
        "parent_sha256": version.parent_sha256,
        "chain_sha256": version.chain_sha256,
        "chain_key_id": version.chain_key_id,
        "metadata": version.metadata,
        "author": _name(version.author),
        "author_name": version.author_name,
        "on_behalf_of": _name(version.on_behalf_of),
        "run_id": version.run_id,
        "reason": version.reason,
        "scanner_version": version.scanner_version,
        "findings": version.findings,
        "created_at": _time(version.created_at),
        "source_refs": [[r.kind, r.ref] for r in version.source_refs.all()],
    }


def review_line(item: DreamReviewItem) -> dict:
    return {
        "id": str(item.pk),
        "job_kind": item.job.kind,
        "action": item.action,
        "status": item.status,
        "source_version": _version_ref(item.source_version),
        "target_store": store_ref(item.target_store) if item.target_store else None,
        "target_path": item.target_path,
        "proposed_title": item.proposed_title,
        "proposed_content": item.proposed_content,
        "rationale": item.rationale,
        "findings": item.findings,
        "related_documents": sorted(str(d.pk) for d in item.related_documents.all()),
        "proposed_by": _name(item.proposed_by),
        "run_id": item.run_id,
        "decided_by": _name(item.decided_by),
        "decided_at": _time(item.decided_at),
        "decision_note": item.decision_note,
        "result_version": _version_ref(item.result_version),
        "created_at": _time(item.created_at),
    }


def document_line(document: MemoryDocument) -> dict:
    return {
        "type": "document",
        "id": str(document.pk),
        "store": store_ref(document.store),
        "path": document.path,
        "title": document.title,
        "recall_hint": document.recall_hint,
        "content": document.content,
        "content_sha256": document.content_sha256,
        "version": document.version,
        "doc_type": document.doc_type,
        "trust": document.trust,
        "state": document.state,
        "always_inject": document.always_inject,
        "tags": list(document.tags),
        "entities": document.entities,
        "importance": document.importance,
        "hit_count": document.hit_count,
        "last_used_at": _time(document.last_used_at),
        "expires_at": _time(document.expires_at),
        "promoted_from": _version_ref(document.promoted_from),
        "created_by": _name(document.created_by),
        "created_at": _time(document.created_at),
        "updated_at": _time(document.updated_at),
        "versions": [version_line(v) for v in document.versions.all()],
        "reviews": [review_line(i) for i in document.review_items],
    }


def _documents(documents: QuerySet[MemoryDocument]) -> Iterator[MemoryDocument]:
    """Documents with everything their lines need, a batch of queries per BATCH."""
    versions = MemoryVersion.objects.select_related("author", "on_behalf_of").prefetch_related(
        "source_refs"
    )
    items = (
        DreamReviewItem.objects.select_related(
            "job",
            "source_version",
            "result_version",
            "proposed_by",
            "decided_by",
            "target_store__owner",
            "target_store__system",
            "target_store__conversation",
        )
        .prefetch_related("related_documents")
        .order_by("created_at", "id")
    )
    ordered = (
        documents.select_related(
            "store__owner", "store__system", "store__conversation", "promoted_from", "created_by"
        )
        .defer("embedding", "search_vector")
        .order_by("created_at", "id")
    )
    ids = list(ordered.values_list("pk", flat=True))
    for start in range(0, len(ids), BATCH):
        batch = ids[start : start + BATCH]
        reviews = defaultdict(list)
        for item in items.filter(source_document_id__in=batch):
            reviews[item.source_document_id].append(item)
        for document in ordered.filter(pk__in=batch).prefetch_related(
            Prefetch("versions", queryset=versions.order_by("version"))
        ):
            document.review_items = reviews[document.pk]
            yield document


def export_lines(
    documents: QuerySet[MemoryDocument], *, progress: Callable[[int], None] | None = None
) -> Iterable[str]:
    """The export of `documents` (the caller decides which), one JSON text per line.

    `progress(done)` after each document line.
    """
    stores = (
        MemoryStore.objects.filter(pk__in=documents.values("store_id"))
        .select_related("owner", "system", "conversation")
        .prefetch_related("conversation__participants")
        .order_by("scope", "slug")
    )
    header = {
        "type": "header",
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "scanner_version": SCANNER_VERSION,
    }
    yield json.dumps(header, sort_keys=True)
    count = {"stores": 0, "documents": 0}
    for store in stores:
        yield json.dumps(store_line(store), sort_keys=True)
        count["stores"] += 1
    for document in _documents(documents):
        yield json.dumps(document_line(document), sort_keys=True, ensure_ascii=False)
        count["documents"] += 1
        if progress:
            progress(count["documents"])
    yield json.dumps({"type": "end", **count}, sort_keys=True)
