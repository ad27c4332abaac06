"""Inputs and outputs of the agent tools, as pydantic models.

One definition serves three purposes: validating requests, the JSON
Schemas of the tool manifest (handed to an LLM as function definitions),
and the OpenAPI document.
"""

import re
from datetime import datetime
from typing import Annotated, Literal, Self
from uuid import UUID

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from memory_app.models import DocType, SourceKind
from memory_app.moments import in_utc
from memory_app.paths import PATH_MAX_LENGTH, path_error

StoreName = Annotated[
    str,
    StringConstraints(min_length=1, max_length=200),
    Field(
        description=(
            "'conversation' (the conversation of X-Memory-Conversation), 'user' (your own "
            "store), 'system:<slug>', or a workspace store slug such as 'workspace_runbooks'."
        )
    ),
]


def _valid_path(value: str) -> str:
    if error := path_error(value):
        raise ValueError(error)
    return value


# PATH_REGEX without its lookahead (no '..'), for JSON Schema consumers.
_SEGMENT = r"(?:(?:\.?[a-z0-9_-])+\.?|\.)"
PathStr = Annotated[
    str,
    AfterValidator(_valid_path),
    Field(
        min_length=1,
        max_length=PATH_MAX_LENGTH,
        description="Segments of [a-z0-9._-] joined by '/', e.g. 'runbooks/nginx-crashloop'.",
        json_schema_extra={"pattern": f"^{_SEGMENT}(?:/{_SEGMENT})*$"},
    ),
]
Tag = Annotated[str, StringConstraints(min_length=1, max_length=64, strip_whitespace=True)]
Sha256 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]


class Input(BaseModel):
    model_config = ConfigDict(extra="forbid")


def present(*names: str, absent: tuple[str, ...] = ()) -> dict:
    """JSON Schema: these properties are present and not null (and those in
    `absent` missing or null)."""
    return {
        "required": list(names),
        "properties": {
            **{name: {"not": {"type": "null"}} for name in names},
            **{name: {"type": "null"} for name in absent},
        },
    }


class DocumentRef(Input):
    """A document named by `id`, or by `store` + `path`."""

    # The rule of `_named`, stated in the JSON Schema for clients and LLMs.
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"anyOf": [present("id"), present("store", "path")]},
    )
    id: UUID | None = Field(
        None, description="The document id; or name the document by store and path instead."
    )
    store: StoreName | None = None
    path: PathStr | None = None

    @model_validator(mode="after")
    def _named(self) -> Self:
        if self.id is None and (self.store is None or self.path is None):
            raise ValueError("Name the document by 'id', or by 'store' and 'path'.")
        return self

    def ref(self) -> dict:
        return {"id": self.id} if self.id else {"store": self.store, "path": self.path}


class EntitiesIn(Input):
    namespace: str | None = Field(None, max_length=200)
    service: str | None = Field(None, max_length=200)
    environment: str | None = Field(None, max_length=200)
    resource: str | None = Field(None, max_length=200)


class SourceRefIn(Input):
    kind: SourceKind
    ref: str = Field(min_length=1, max_length=500)


# The metadata memory_remember and memory_patch both take, validated alike.
RecallHint = Annotated[
    str, Field(max_length=1000, description="What this is and when to recall it.")
]
Tags = Annotated[list[Tag], Field(max_length=20)]
Importance = Annotated[int, Field(ge=0, le=10)]
# An ISO 8601 moment as it begins: a date, alone (its midnight) or with a time.
_ISO_MOMENT = re.compile(r"\d{4}-\d{2}-\d{2}(?:[Tt ]|$)")
_MOMENT = TypeAdapter(datetime)


def _iso_8601(value: object) -> object:
    """A string read as an ISO 8601 moment, and only as one: pydantic reads
    "0" or "1893456000" as Unix seconds even in strict mode (and "20260101"
    as a moment in 1970), where the API promises ISO 8601. Parsed here, as a
    JSON string is, because past this validator pydantic no longer reads
    JSON and in strict mode would refuse every string."""
    if not isinstance(value, str):
        return value
    if not _ISO_MOMENT.match(value):
        raise PydanticCustomError(
            "datetime_parsing", "An ISO 8601 date and time, such as 2026-01-31T12:00:00Z."
        )
    try:
        # Lax reads a date alone as its midnight; the pattern has already
        # refused every other form lax mode would take.
        return _MOMENT.validate_strings(value, strict=len(value) > len("YYYY-MM-DD"))
    except ValidationError as error:
        reason = error.errors(include_url=False)[0]["msg"]
        raise PydanticCustomError("datetime_parsing", "{reason}", {"reason": reason}) from None


# An ISO 8601 string; a moment without an offset is taken as UTC.
ExpiresAt = Annotated[datetime, BeforeValidator(_iso_8601), AfterValidator(in_utc)]
SourceRefs = Annotated[list[SourceRefIn], Field(max_length=50)]
# Optional fields memory_remember keeps on an existing document when not sent.
KEPT_WHEN_ABSENT = (
    "doc_type",
    "recall_hint",
    "tags",
    "entities",
    "always_inject",
    "importance",
    "expires_at",
    "source_refs",
)


class RememberIn(Input):
    """Save a memory. Agent-written memories are drafts (agent_draft trust).

    Updating an existing path (or a near-duplicate), the optional fields
    that are not sent keep the document's values; those sent replace them.
    """

    store: StoreName
    path: PathStr | None = Field(None, description="Derived from the title when absent.")
    title: str = Field("", max_length=300)
    content: str = Field(min_length=1, description="The memory itself.")
    doc_type: DocType = DocType.NOTE
    recall_hint: RecallHint = ""
    tags: Tags = Field(default_factory=list)
    entities: EntitiesIn = Field(default_factory=EntitiesIn)
    always_inject: bool = Field(False, description="Proposed; applied in user/conversation stores.")
    importance: Importance = 5
    expires_at: ExpiresAt | None = Field(
        None, description="When it expires (ISO 8601; UTC without an offset), or null for never."
    )
    source_refs: SourceRefs = Field(default_factory=list)


class EditIn(Input):
    old: str = Field(min_length=1, description="Text that occurs exactly once.")
    new: str


def _no_default(schema: dict) -> None:
    schema.pop("default", None)


def _kept(description: str):
    """An optional memory_patch field: absent (never null) keeps the value."""
    return Field(None, description=f"{description} Not sent: kept.", json_schema_extra=_no_default)


# memory_patch's metadata, each optional; only expires_at may be null (no expiry).
PATCH_METADATA = (
    "title",
    "recall_hint",
    "tags",
    "entities",
    "importance",
    "expires_at",
    "source_refs",
)
_NOT_NULL = tuple(name for name in PATCH_METADATA if name != "expires_at")


class PatchIn(DocumentRef):
    """Change a document you read, if it has not changed since (optimistic concurrency).

    Content (full or by edits), metadata, or both; metadata not sent is kept.
    The metadata fields are an addition to memory_patch: a request without
    them is answered as before.
    """

    # `_one_change` and `_named`, in the JSON Schema.
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "allOf": [
                DocumentRef.model_config["json_schema_extra"],
                {"not": present("content", "edits")},
                {
                    "anyOf": [
                        present("content"),
                        present("edits"),
                        *(present(name) for name in _NOT_NULL),
                        {"required": ["expires_at"]},
                    ]
                },
            ]
        },
    )
    expected_sha256: Sha256 = Field(description="The sha256 you read with memory_read.")
    content: str | None = Field(None, min_length=1, description="Full replacement content.")
    edits: list[EditIn] | None = Field(None, min_length=1, max_length=50)
    # Typed without None: null is refused by `_not_null`, and an error names
    # the field alone, not a member of a union.
    title: Annotated[str, Field(min_length=1, max_length=300)] = _kept("A new title.")
    recall_hint: RecallHint = _kept("A new recall hint.")
    tags: Tags = _kept("The new tags (replace the old).")
    entities: EntitiesIn = _kept("The new entities (replace the old).")
    importance: Importance = _kept("The new importance.")
    expires_at: ExpiresAt | None = _kept("When it expires (ISO 8601), or null for never.")
    source_refs: SourceRefs = _kept("The evidence of the new version (replaces the head's).")

    @field_validator(*_NOT_NULL, mode="before")
    @classmethod
    def _not_null(cls, value: object) -> object:
        if value is None:
            raise ValueError("May not be null; leave it out to keep the current value.")
        return value

    @model_validator(mode="after")
    def _one_change(self) -> Self:
        if self.content is not None and self.edits is not None:
            raise ValueError("Send either 'content' or 'edits', not both.")
        if self.content is None and self.edits is None and not self.metadata_sent():
            raise ValueError("Send 'content', 'edits' or metadata to change.")
        return self

    def metadata_sent(self) -> set[str]:
        return self.model_fields_set & set(PATCH_METADATA)


class ReadIn(DocumentRef):
    """Read one document in full (optionally an older version)."""

    version: int | None = Field(None, ge=1)


class ListIn(Input):
    """List a store's documents by path."""

    store: StoreName
    prefix: str = Field("", max_length=PATH_MAX_LENGTH)
    limit: int = Field(50, ge=1, le=200)
    cursor: str | None = Field(None, max_length=500)
    include_inactive: bool = False


class HistoryIn(DocumentRef):
    """A document's versions, newest first."""

    limit: int = Field(50, ge=1, le=200)


class DeleteIn(DocumentRef):
    """Ask for a document to be deleted; a human confirms."""

    reason: str = Field("", max_length=2000)


class SearchIn(Input):
    """Search the memories you may read; best first."""

    query: str = Field(min_length=1, max_length=1000)
    limit: int = Field(10, ge=1, le=50)
    stores: list[StoreName] | None = Field(None, max_length=20)
    doc_types: list[DocType] | None = Field(None, max_length=9)
    tags: list[Tag] | None = Field(None, max_length=20)
    include_drafts: bool = True
    mode: Literal["hybrid", "text", "semantic"] = "hybrid"


class ContextIn(Input):
    """The memory context for this turn: advisory notes to verify, with ids to cite."""

    message: str = Field(min_length=1, max_length=20000)
    max_docs: int = Field(
        8,
        ge=1,
        le=50,
        description=(
            "At most this many documents found for the message; pinned documents "
            "come first, under a cap of their own (MEMORY_ALWAYS_INJECT_CAP)."
        ),
    )
    token_budget: int | None = Field(None, ge=1, le=100_000)


class MarkUsedIn(Input):
    """Report which memory ids this turn actually relied on."""

    ids: list[UUID] = Field(min_length=1, max_length=50)


class ProposePromotionIn(DocumentRef):
    """Propose a draft of yours for shared memory; a reviewer decides."""

    target_store: StoreName = Field(
        description="A workspace store slug (e.g. 'workspace_runbooks') or 'system:<slug>'."
    )
    target_path: PathStr | None = Field(None, description="Defaults to the draft's path.")
    rationale: str = Field(
        min_length=1, max_length=2000, description="Why others should know this."
    )


class ApproveIn(Input):
    note: str = Field("", max_length=2000)
    content: str | None = Field(None, min_length=1, description="Edited content to apply instead.")
    keep_apart: list[UUID] = Field(
        default_factory=list,
        max_length=50,
        description="A merge's members (ids) that say something else: they are not superseded.",
    )


class RejectIn(Input):
    # Stripped first, as the queue's form does: a note of spaces says nothing.
    note: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=2000)]


class AlwaysInjectIn(Input):
    value: bool


class RollbackIn(Input):
    version: int = Field(ge=1)
    reason: str = Field("", max_length=2000)


class RedactIn(Input):
    """The text to remove from every version, or a span of one version's content."""

    # `_one_form` in the JSON Schema (that the span fits the content, or the
    # text occurs in it, only the document can tell).
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "oneOf": [
                present("text", absent=("version", "start", "end")),
                present("start", "end", absent=("text",)),
            ]
        },
    )
    text: str | None = Field(None, min_length=1, max_length=20000)
    version: int | None = Field(None, ge=1, description="Whose content start/end index; head.")
    start: int | None = Field(None, ge=0)
    end: int | None = Field(None, ge=1)

    @model_validator(mode="after")
    def _one_form(self) -> Self:
        span = (self.start, self.end, self.version)
        if self.text is not None and any(part is not None for part in span):
            raise ValueError("Send either 'text', or 'start' and 'end' (and 'version').")
        if self.text is None and (self.start is None or self.end is None):
            raise ValueError("Send 'text', or both 'start' and 'end'.")
        if self.start is not None and self.end is not None and self.end <= self.start:
            raise ValueError("'end' must be greater than 'start'.")
        return self


# Outputs


class SourceRefOut(BaseModel):
    kind: str
    ref: str


class DocumentSummaryOut(BaseModel):
    id: UUID
    store: str
    path: str
    title: str
    doc_type: str
    trust: str
    state: str
    always_inject: bool
    version: int
    updated_at: datetime


class DocumentOut(BaseModel):
    id: UUID
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
    entities: dict
    importance: int
    hit_count: int
    expires_at: datetime | None
    created_at: datetime
    updated_at: datetime
    source_refs: list[SourceRefOut]


class ListOut(BaseModel):
    documents: list[DocumentSummaryOut]
    next_cursor: str | None


class VersionOut(BaseModel):
    version: int
    sha256: str
    parent_sha256: str
    chain_sha256: str
    change: str
    author: str
    on_behalf_of: str | None
    created_at: datetime
    content_preview: str
    source_refs: list[SourceRefOut]


class HistoryOut(BaseModel):
    versions: list[VersionOut]


class WriteOut(BaseModel):
    id: UUID
    store: str
    path: str
    version: int
    sha256: str
    trust: str
    state: str
    outcome: Literal["created", "updated", "deduplicated", "unchanged"]


class DeleteOut(BaseModel):
    status: Literal["pending_confirmation"]
    review_item_id: UUID


class SearchHitOut(DocumentSummaryOut):
    score: float
    snippet: str


class SearchOut(BaseModel):
    results: list[SearchHitOut]


class ComponentsOut(BaseModel):
    text: float
    trust: float
    entity: float
    doc_type: float
    recency: float


class ContextDocumentOut(BaseModel):
    id: UUID
    store: str
    path: str
    trust: str
    block: Literal["always", "trusted", "untrusted"]
    score: float
    tokens: int
    components: ComponentsOut


class ContextOut(BaseModel):
    context: str
    tokens: int
    documents: list[ContextDocumentOut]
    event_id: int | None = None
    trace_id: int | None = None
    disabled: bool | None = None


class MarkUsedOut(BaseModel):
    updated: int


class ProposalOut(BaseModel):
    dream_job_id: UUID
    review_item_id: UUID
    status: Literal["awaiting_review"]


class ReviewItemOut(BaseModel):
    id: UUID
    dream_job_id: UUID
    action: str
    status: str
    source_document_id: UUID | None
    source_version: int | None
    target_store: str | None
    target_path: str
    proposed_title: str
    proposed_content: str
    rationale: str
    findings: list[dict]
    proposed_by: str | None
    decided_by: str | None
    decided_at: datetime | None
    decision_note: str
    created_at: datetime


class ReviewItemListOut(BaseModel):
    items: list[ReviewItemOut]
    next_cursor: str | None


class FindingOut(BaseModel):
    """Where a scanner rule matched, by field and character span; never the
    matched text."""

    detector: str
    field: str
    start: int
    end: int
    blocking: bool = True


class ErrorOut(BaseModel):
    """Every error answer; the fields after `detail` come with the errors
    that name them, so that an agent can act on them."""

    error: str
    detail: str
    fields: dict[str, list[str]] | None = Field(
        None, description="invalid_input: the refused fields, each with its messages."
    )
    current_sha256: str | None = Field(
        None, description="conflict (409): the head's sha256, to read again and retry."
    )
    current_version: int | None = Field(None, description="conflict (409): the head's version.")
    findings: list[FindingOut] | None = Field(
        None, description="write_blocked (422): each finding, without the matched text."
    )
    reason: str | None = Field(
        None, description="policy_denied (403): which rule refused, e.g. document_not_active."
    )
    event: str | None = Field(
        None, description="The event recorded about the refusal, e.g. memory.policy.denied."
    )
