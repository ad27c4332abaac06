"""Turning documents and versions into the API's output shapes."""

from memory_app.access import store_ref
from memory_app.actors import Actor
from memory_app.api import schemas
from memory_app.models import MemoryDocument, MemoryVersion
from memory_app.selectors.search import Scored, snippet
from memory_app.services.context import ContextResult
from memory_app.services.documents import WriteResult

PREVIEW_CHARS = 200


def _refs(version: MemoryVersion) -> list[schemas.SourceRefOut]:
    return [schemas.SourceRefOut(kind=r.kind, ref=r.ref) for r in getattr(version, "refs", [])]


def document_summary(document: MemoryDocument, actor: Actor) -> dict:
    return schemas.DocumentSummaryOut(
        id=document.id,
        store=store_ref(document.store, actor),
        path=document.path,
        title=document.title,
        doc_type=document.doc_type,
        trust=document.trust,
        state=document.state,
        always_inject=document.always_inject,
        version=document.version,
        updated_at=document.updated_at,
    ).model_dump(mode="json")


_HEAD_FIELDS = (
    "doc_type",
    "trust",
    "state",
    "always_inject",
    "tags",
    "entities",
    "importance",
    "expires_at",
)


def document_detail(document: MemoryDocument, version: MemoryVersion, actor: Actor) -> dict:
    """The document as of `version`: the live head, or an older version's snapshot."""
    fields = {name: getattr(document, name) for name in _HEAD_FIELDS}
    if version.version != document.version:
        fields.update({k: v for k, v in (version.metadata or {}).items() if k in _HEAD_FIELDS})
    return schemas.DocumentOut(
        id=document.id,
        store=store_ref(document.store, actor),
        scope=document.store.scope,
        path=document.path,
        title=version.title,
        recall_hint=version.recall_hint,
        content=version.content,
        sha256=version.sha256,
        version=version.version,
        hit_count=document.hit_count,
        created_at=document.created_at,
        updated_at=version.created_at,
        source_refs=_refs(version),
        **fields,
    ).model_dump(mode="json")


def version_row(version: MemoryVersion) -> dict:
    return schemas.VersionOut(
        version=version.version,
        sha256=version.sha256,
        parent_sha256=version.parent_sha256,
        chain_sha256=version.chain_sha256,
        change=version.change,
        author=version.author_name,
        on_behalf_of=version.on_behalf_of.get_username() if version.on_behalf_of else None,
        created_at=version.created_at,
        content_preview=version.content[:PREVIEW_CHARS],
        source_refs=_refs(version),
    ).model_dump(mode="json")


def write_result(result: WriteResult, actor: Actor) -> dict:
    document = result.document
    return schemas.WriteOut(
        id=document.id,
        store=store_ref(document.store, actor),
        path=document.path,
        version=document.version,
        sha256=document.content_sha256,
        trust=document.trust,
        state=document.state,
        outcome=result.outcome,
    ).model_dump(mode="json")


def search_hit(hit: Scored, query: str, actor: Actor) -> dict:
    return {
        **document_summary(hit.document, actor),
        "score": hit.score,
        "snippet": snippet(hit.document.content, query),
    }


def context_result(result: ContextResult, actor: Actor) -> dict:
    if result.disabled:
        return {"context": "", "tokens": 0, "documents": [], "disabled": True}
    return schemas.ContextOut(
        context=result.built.text,
        tokens=result.built.tokens,
        documents=[
            schemas.ContextDocumentOut(
                id=entry.document.pk,
                store=store_ref(entry.document.store, actor),
                path=entry.document.path,
                trust=entry.document.trust,
                block=entry.block,
                score=entry.score,
                tokens=entry.tokens,
                components=entry.components,
            )
            for entry in result.built.entries
        ],
        event_id=result.event_id,
        trace_id=result.trace_id,
    ).model_dump(mode="json", exclude_none=True)


def review_item(item) -> dict:
    return schemas.ReviewItemOut(
        id=item.pk,
        dream_job_id=item.job_id,
        action=item.action,
        status=item.status,
        source_document_id=item.source_document_id,
        source_version=item.source_version.version if item.source_version else None,
        # Named as the tools name stores ("system:payments-api").
        target_store=store_ref(item.target_store) if item.target_store else None,
        target_path=item.target_path,
        proposed_title=item.proposed_title,
        proposed_content=item.proposed_content,
        rationale=item.rationale,
        findings=item.findings,
        proposed_by=item.proposed_by.get_username() if item.proposed_by else None,
        decided_by=item.decided_by.get_username() if item.decided_by else None,
        decided_at=item.decided_at,
        decision_note=item.decision_note,
        created_at=item.created_at,
    ).model_dump(mode="json")
