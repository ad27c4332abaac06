"""The answers of the tools, as API.md describes them and the server sends them
(fields may be added)."""

from typing import Any, Literal, NotRequired, TypedDict


class SourceRef(TypedDict):
    kind: str
    ref: str


class ContextComponents(TypedDict):
    """What made up a context document's score."""

    text: float
    trust: float
    entity: float
    doc_type: float
    recency: float


class ContextDocument(TypedDict):
    id: str
    store: str
    path: str
    trust: str
    block: Literal["always", "trusted", "untrusted"]
    score: float
    tokens: int
    components: ContextComponents


class ContextResult(TypedDict, total=False):
    """`event_id` and `trace_id` are absent when memory is disabled, `disabled`
    is present only then."""

    context: str
    tokens: int
    documents: list[ContextDocument]
    event_id: int
    trace_id: int
    disabled: bool


class WriteResult(TypedDict):
    id: str
    store: str
    path: str
    version: int
    sha256: str
    trust: str
    state: str
    outcome: Literal["created", "updated", "deduplicated", "unchanged"]


class Document(TypedDict, total=False):
    id: str
    store: str
    scope: str
    path: str
    title: str
    recall_hint: str
    content: str
    sha256: str
    version: int
    doc_type: str
    trust: str
    state: str
    always_inject: bool
    tags: list[str]
    entities: dict[str, str | None]
    importance: int
    hit_count: int
    expires_at: str | None
    created_at: str
    updated_at: str
    source_refs: list[SourceRef]


class DocumentSummary(TypedDict, total=False):
    """A document as `memory_list` and `memory_search` show it."""

    id: str
    store: str
    path: str
    title: str
    doc_type: str
    trust: str
    state: str
    always_inject: bool
    version: int
    updated_at: str


class SearchHit(DocumentSummary, total=False):
    score: float
    snippet: str


class DocumentList(TypedDict):
    documents: list[DocumentSummary]
    next_cursor: str | None


class Version(TypedDict):
    version: int
    sha256: str
    parent_sha256: str
    chain_sha256: str
    change: str
    author: str
    on_behalf_of: str | None
    created_at: str
    content_preview: str
    source_refs: list[SourceRef]


class Proposal(TypedDict):
    dream_job_id: str
    review_item_id: str
    status: str


class DeletionRequest(TypedDict):
    status: Literal["pending_confirmation"]
    review_item_id: str


class CapturedDraft(TypedDict):
    id: str
    path: str
    title: str
    kind: str
    outcome: str


class SkippedDraft(TypedDict):
    """`excerpt` is never sent for a scanner refusal."""

    reason: str
    kind: NotRequired[str]
    excerpt: NotRequired[str]
    retry_after: NotRequired[int]


class CaptureResult(TypedDict):
    kept: list[CapturedDraft]
    skipped: list[SkippedDraft]


class Event(TypedDict):
    id: int
    type: str
    created_at: str
    payload: dict[str, Any]
