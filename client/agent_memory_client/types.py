"""The answers of the tools, as API.md describes them (fields may be added)."""

from typing import Any, Literal, TypedDict


class ContextDocument(TypedDict):
    id: str
    store: str
    path: str
    trust: str
    block: Literal["always", "trusted", "untrusted"]
    score: float
    tokens: int


class ContextResult(TypedDict, total=False):
    context: str
    tokens: int
    documents: list[ContextDocument]
    event_id: int
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
    path: str
    title: str
    content: str
    sha256: str
    version: int
    doc_type: str
    trust: str
    state: str
    tags: list[str]
    source_refs: list[dict[str, str]]


class SearchHit(TypedDict, total=False):
    id: str
    store: str
    path: str
    title: str
    score: float
    snippet: str
    version: int


class Proposal(TypedDict):
    dream_job_id: str
    review_item_id: str
    status: str


class Event(TypedDict):
    id: int
    type: str
    created_at: str
    payload: dict[str, Any]
