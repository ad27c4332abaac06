"""The shape of each line of an export, which memory_import holds every line to.

The fields the agent API takes are held to the API's own rules: a value
the API would refuse (entities that are not an object, a moment Python
cannot read, a run id of two lines, a reason of megabytes) breaks every
later read of its row, not only the import. Texts the app composes itself
(a dream's rationale) may be as long as a document's content. The
scanner's verdicts a file carries (`scanner_version`, `findings`) are read
but not kept: the import scans again (services/importing.py).
"""

import re
from datetime import datetime
from typing import Annotated, Literal
from uuid import UUID

from django.conf import settings
from django.contrib.auth import get_user_model
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from memory_app.api.schemas import (
    EntitiesIn,
    ExpiresAt,
    Importance,
    PathStr,
    RecallHint,
    Sha256,
    Tags,
)
from memory_app.api.validation import RUNTIME_VALUE, text_problem
from memory_app.models import (
    ChangeKind,
    DocState,
    DocType,
    DreamKind,
    MemoryStore,
    ReviewAction,
    ReviewStatus,
    Scope,
    SourceKind,
    System,
    Trust,
)
from memory_app.moments import in_utc
from memory_app.paths import STORE_SLUG_REGEX, path_error
from memory_app.services.merge_sources import MAX_REFS

_SLUG = re.compile(STORE_SLUG_REGEX)
_RUNTIME_VALUE = re.compile(RUNTIME_VALUE, re.ASCII)
# The longest reason or note the API and the pages take.
NOTE_LENGTH = 2000
_USERNAME_LENGTH = get_user_model()._meta.get_field("username").max_length
_SYSTEM_SLUG_LENGTH = System._meta.get_field("slug").max_length
_STORE_SLUG_LENGTH = MemoryStore._meta.get_field("slug").max_length


def store_ref_problem(ref: str) -> str | None:
    """Why `ref` names no store an import can create, or None.

    Stores are named as the API names them (API.md, "Store names"), each
    part held to the rule of what it names: a slug a store's slug can hold
    (a system's store is "system-<slug>"), a username as memory_user takes
    it, a conversation id as X-Memory-Conversation takes it.
    """
    kind, colon, rest = ref.partition(":")
    if ref in ("user", "conversation"):
        return "names the caller's own store in the API; an export names stores in full"
    if colon and kind == "system":
        if len(rest) > _SYSTEM_SLUG_LENGTH or not _SLUG.match(rest):
            return f"a system slug is 1 to {_SYSTEM_SLUG_LENGTH} of a-z, 0-9, '_' and '-'"
    elif colon and kind == "user":
        if not 0 < len(rest) <= _USERNAME_LENGTH or _control_problem(rest):
            return f"a username is 1 to {_USERNAME_LENGTH} characters, none of them a control"
    elif colon and kind == "conversation":
        if not _RUNTIME_VALUE.match(rest):
            return "a conversation id is 1 to 200 letters, digits or . _ : @ / + = -"
    elif len(ref) > _STORE_SLUG_LENGTH or not _SLUG.match(ref):
        return (
            "a store is 'system:<slug>', 'user:<name>', 'conversation:<id>' or a "
            f"workspace store's slug (1 to {_STORE_SLUG_LENGTH} of a-z, 0-9, '_' and '-')"
        )
    return None


def _control_problem(value: str) -> str | None:
    """Why a one-line name cannot be stored: any control, tab and newline too."""
    if problem := text_problem(value):
        return problem
    if match := re.search(r"[\t\n\r]", value):
        return f"Control character U+{ord(match.group()):04X} at position {match.start()}."
    return None


def _one_line(value: str) -> str:
    if problem := _control_problem(value):
        raise ValueError(problem)
    return value


def _valid_run_id(value: str) -> str:
    """A run id as X-Memory-Run takes it, or none."""
    if value and not _RUNTIME_VALUE.match(value):
        raise ValueError("a run id is 1 to 200 letters, digits or . _ : @ / + = -")
    return value


def _within_content_limit(value: str) -> str:
    """At most MEMORY_MAX_CONTENT_CHARS, the limit every write holds content to."""
    limit = settings.MEMORY_MAX_CONTENT_CHARS
    if len(value) > limit:
        raise ValueError(f"{len(value)} characters; the limit is {limit}")
    return value


def _valid_store_ref(value: str) -> str:
    if problem := store_ref_problem(value):
        raise ValueError(problem)
    return value


def _valid_target_path(value: str) -> str:
    """A review item's target path: a document path, or none."""
    if value and (problem := path_error(value)):
        raise ValueError(problem)
    return value


StoreRef = Annotated[str, AfterValidator(_valid_store_ref)]
Username = Annotated[
    str, StringConstraints(min_length=1, max_length=_USERNAME_LENGTH), AfterValidator(_one_line)
]
# Any moment of a row is read back by every later query of it (moments.py).
Moment = Annotated[datetime, AfterValidator(in_utc)]
# [document id, version number], as export._version_ref writes it.
VersionRef = tuple[UUID, Annotated[int, Field(ge=1)]]
# A first version has no parent.
ParentSha256 = Annotated[str, StringConstraints(pattern=r"^(?:[0-9a-f]{64})?$")]
Title = Annotated[str, Field(max_length=300)]
RunId = Annotated[str, AfterValidator(_valid_run_id)]
Content = Annotated[str, AfterValidator(_within_content_limit)]
Note = Annotated[str, Field(max_length=NOTE_LENGTH)]
# [kind, ref], held to SourceRefIn's rules; a merge carries its members' too.
SourceRefs = Annotated[
    list[tuple[SourceKind, Annotated[str, Field(min_length=1, max_length=500)]]],
    Field(max_length=MAX_REFS),
]


class _Line(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StoreLine(_Line):
    type: Literal["store"]
    ref: StoreRef
    scope: Scope
    name: Annotated[str, Field(max_length=200)]
    description: str
    participants: list[Username]


class VersionMetadata(BaseModel):
    """The head's other fields after a change (versions.head_metadata);
    older versions hold fewer. Rollbacks and reads of old versions use them."""

    model_config = ConfigDict(extra="ignore")
    # Absent is fine, null is not: a default is never validated, a value is.
    doc_type: DocType = Field(None)
    trust: Trust = Field(None)
    state: DocState = Field(None)
    always_inject: bool = Field(None)
    tags: Tags = Field(None)
    entities: EntitiesIn = Field(None)
    importance: Importance = Field(None)
    expires_at: ExpiresAt | None = None


class VersionLine(_Line):
    version: Annotated[int, Field(ge=1)]
    change: ChangeKind
    title: Title
    recall_hint: RecallHint
    content: Content
    sha256: Sha256
    parent_sha256: ParentSha256
    chain_sha256: Sha256
    # Absent in exports from before keyed chains, which do not verify.
    chain_key_id: Annotated[str, Field(max_length=16)] = ""
    metadata: VersionMetadata
    author: Username | None
    author_name: Username
    on_behalf_of: Username | None
    run_id: RunId
    # The app writes a proposal's rationale as its approved version's reason.
    reason: Content
    scanner_version: Annotated[str, Field(max_length=40)]
    findings: list[dict]
    created_at: Moment
    source_refs: SourceRefs


class ReviewLine(_Line):
    id: UUID
    job_kind: DreamKind
    action: ReviewAction
    status: ReviewStatus
    source_version: VersionRef | None
    target_store: StoreRef | None
    target_path: Annotated[str, AfterValidator(_valid_target_path)]
    proposed_title: Title
    proposed_content: Content
    rationale: Content
    findings: list[dict]
    related_documents: list[UUID]
    proposed_by: Username | None
    run_id: RunId
    decided_by: Username | None
    decided_at: Moment | None
    decision_note: Note
    result_version: VersionRef | None
    created_at: Moment


class DocumentLine(_Line):
    type: Literal["document"]
    id: UUID
    store: StoreRef
    path: PathStr
    title: Title
    recall_hint: RecallHint
    content: Content
    content_sha256: Sha256
    version: Annotated[int, Field(ge=1)]
    doc_type: DocType
    trust: Trust
    state: DocState
    always_inject: bool
    tags: Tags
    entities: EntitiesIn
    importance: Importance
    hit_count: Annotated[int, Field(ge=0)]
    last_used_at: Moment | None
    expires_at: ExpiresAt | None
    promoted_from: VersionRef | None
    created_by: Username | None
    created_at: Moment
    updated_at: Moment
    versions: Annotated[list[VersionLine], Field(min_length=1)]
    reviews: list[ReviewLine]


class EndLine(_Line):
    """The last line of a version 2 file: what came before it."""

    type: Literal["end"]
    stores: Annotated[int, Field(ge=0)]
    documents: Annotated[int, Field(ge=0)]


LINES = {"store": StoreLine, "document": DocumentLine, "end": EndLine}
