"""The agent tools: one view per tool, each calling a service or selector.

`POST /api/v1/tools/<name>` with the tool's arguments as the JSON body.
Every view resolves the runtime headers into an Actor, validates the body
against the tool's pydantic model, and leaves errors to the one mapping in
api/errors.py.
"""

from collections.abc import Iterable
from typing import ClassVar

from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from pydantic import BaseModel
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memory_app.access import access_document
from memory_app.actors import Actor
from memory_app.api import presenters, schemas
from memory_app.api.context import actor_from_request, parse_input, turn_wanted
from memory_app.api.validation import RUNTIME_VALUE_SCHEMA
from memory_app.policy import check_can_read
from memory_app.selectors.documents import document_history, document_version, documents_list
from memory_app.selectors.search import memory_search
from memory_app.services.context import memory_context_load, memory_mark_used
from memory_app.services.conversations import conversation_claim
from memory_app.services.delete import memory_delete_request
from memory_app.services.patch import Edit, memory_patch
from memory_app.services.principals import TurnWanted
from memory_app.services.promote import memory_propose_promotion
from memory_app.services.remember import RememberInput, memory_remember
from memory_app.services.versions import SourceRef


def runtime_headers(*, conversation_required: bool = False) -> list[OpenApiParameter]:
    """The runtime headers of a tool call; some tools cannot work without a conversation."""
    return [
        OpenApiParameter(
            "X-Memory-Conversation",
            RUNTIME_VALUE_SCHEMA,
            OpenApiParameter.HEADER,
            required=conversation_required,
            description=(
                "The conversation of this turn; the first write that succeeds creates it "
                "and its store (a read, or a write that fails or keeps nothing, creates "
                "nothing)."
            ),
        ),
        OpenApiParameter(
            "X-Memory-Run",
            RUNTIME_VALUE_SCHEMA,
            OpenApiParameter.HEADER,
            description="The run id (required for service accounts' writes).",
        ),
        OpenApiParameter(
            "X-Memory-On-Behalf-Of",
            RUNTIME_VALUE_SCHEMA,
            OpenApiParameter.HEADER,
            description="Evaluate the call as this user (needs the act-on-behalf permission).",
        ),
    ]


RUNTIME_HEADERS = runtime_headers()


def _errors(*codes: int) -> dict[int, OpenApiResponse]:
    described = {
        400: "invalid_input (a body that is not JSON too)",
        401: "not_authenticated",
        403: "permission_denied or policy_denied",
        404: "not_found",
        409: "conflict (stale expected_sha256)",
        413: "too_large",
        422: "write_blocked (safety scanner)",
        429: "rate_limited (Retry-After header)",
    }
    return {code: OpenApiResponse(schemas.ErrorOut, description=described[code]) for code in codes}


READ_ERRORS = _errors(400, 401, 403, 404)
WRITE_ERRORS = _errors(400, 401, 403, 404, 413, 422, 429)


def sent_metadata(data: BaseModel, names: Iterable[str]) -> dict:
    """The optional metadata fields the request sent, as the services take them.

    Fields left out are absent here, so the service keeps the document's values.
    """
    convert = {
        "doc_type": lambda value: value.value,
        "tags": list,
        "entities": lambda value: value.model_dump(exclude_none=True),
        "source_refs": lambda refs: [SourceRef(r.kind.value, r.ref) for r in refs],
    }
    return {
        name: convert.get(name, lambda value: value)(getattr(data, name))
        for name in names
        if name in data.model_fields_set
    }


class ToolView(APIView):
    """Headers → Actor, body → input model, then `run`."""

    name: ClassVar[str]
    description: ClassVar[str]
    write: ClassVar[bool]
    input_model: ClassVar[type[BaseModel]]
    responses: ClassVar[dict]
    needs_conversation: ClassVar[bool] = False
    # Draws on every store of the turn (memory_search, memory_context).
    reads_turn_stores: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        extend_schema_view(
            post=extend_schema(
                operation_id=cls.name,
                summary=cls.name,
                description=cls.description,
                request=cls.input_model,
                responses=cls.responses,
                parameters=runtime_headers(conversation_required=cls.needs_conversation),
                tags=["tools"],
            )
        )(cls)

    def turn_wanted(self, request: Request) -> TurnWanted | None:
        """The turn `post` resolves, for the key's lookup to read with the key."""
        return turn_wanted(request, with_stores=self.reads_turn_stores)

    def post(self, request: Request) -> Response:
        actor = actor_from_request(request, with_stores=self.reads_turn_stores)
        if not self.write:
            check_can_read(actor)
        data = parse_input(self.input_model, request.data)
        if self.write and actor.conversation_name:
            # A conversation no write has created yet: only this one's success creates it.
            return conversation_claim(actor=actor, write=lambda claimed: self.run(claimed, data))
        return self.run(actor, data)

    def run(self, actor: Actor, data) -> Response:
        raise NotImplementedError


class MemoryReadView(ToolView):
    name = "memory_read"
    description = (
        "Read one memory in full by id or store+path, with its sha256 (needed by "
        "memory_patch) and source refs. Memory is advisory: verify before acting."
    )
    write = False
    input_model = schemas.ReadIn

    responses = {200: schemas.DocumentOut, **READ_ERRORS}

    def run(self, actor: Actor, data: schemas.ReadIn) -> Response:
        document = access_document(actor, **data.ref())
        version = document_version(document, data.version)
        return Response(presenters.document_detail(document, version, actor))


class MemoryListView(ToolView):
    name = "memory_list"
    description = (
        "List the memories of one store by path (optionally under a prefix), a page at a "
        "time; pass next_cursor back as cursor for the next page."
    )
    write = False
    input_model = schemas.ListIn

    responses = {200: schemas.ListOut, **READ_ERRORS}

    def run(self, actor: Actor, data: schemas.ListIn) -> Response:
        documents, next_cursor = documents_list(
            actor=actor,
            store=data.store,
            prefix=data.prefix,
            limit=data.limit,
            cursor=data.cursor,
            include_inactive=data.include_inactive,
        )
        return Response(
            {
                "documents": [presenters.document_summary(d, actor) for d in documents],
                "next_cursor": next_cursor,
            }
        )


class MemoryHistoryView(ToolView):
    name = "memory_history"
    description = "The versions of one memory, newest first: who changed what, when, and why."
    write = False
    input_model = schemas.HistoryIn

    responses = {200: schemas.HistoryOut, **READ_ERRORS}

    def run(self, actor: Actor, data: schemas.HistoryIn) -> Response:
        document = access_document(actor, **data.ref())
        versions = document_history(document, limit=data.limit)
        return Response({"versions": [presenters.version_row(v) for v in versions]})


class MemoryRememberView(ToolView):
    name = "memory_remember"
    description = (
        "Save a memory as a draft: in 'conversation' (any type) or 'user' (user_preference "
        "only). Saving to an existing path keeps the optional fields you leave out. Shared "
        "stores change only through memory_propose_promotion. Never include secrets, tokens "
        "or raw logs: such writes are refused."
    )
    write = True
    input_model = schemas.RememberIn

    responses = {
        201: OpenApiResponse(schemas.WriteOut, description="created"),
        200: OpenApiResponse(schemas.WriteOut, description="updated, deduplicated, unchanged"),
        **WRITE_ERRORS,
    }

    def run(self, actor: Actor, data: schemas.RememberIn) -> Response:
        result = memory_remember(
            actor=actor,
            data=RememberInput(
                store=data.store,
                path=data.path,
                title=data.title,
                content=data.content,
                **sent_metadata(data, schemas.KEPT_WHEN_ABSENT),
            ),
        )
        code = status.HTTP_201_CREATED if result.created else status.HTTP_200_OK
        return Response(presenters.write_result(result, actor), status=code)


class MemoryPatchView(ToolView):
    name = "memory_patch"
    description = (
        "Change a memory you read: send expected_sha256 from memory_read and the full new "
        "content, or edits (each 'old' must occur exactly once), and/or metadata (title, "
        "recall_hint, tags, entities, importance, expires_at, source_refs); metadata not sent "
        "is kept. A stale sha answers 409 with the current one: read again and retry."
    )
    write = True
    input_model = schemas.PatchIn

    responses = {
        200: OpenApiResponse(
            schemas.WriteOut,
            description=(
                'outcome "updated"; a patch that changes nothing writes no version '
                "and answers the current version and sha256"
            ),
        ),
        **_errors(400, 401, 403, 404, 409, 413, 422, 429),
    }

    def run(self, actor: Actor, data: schemas.PatchIn) -> Response:
        document = access_document(actor, **data.ref())
        result = memory_patch(
            actor=actor,
            document=document,
            expected_sha256=data.expected_sha256,
            content=data.content,
            edits=[Edit(e.old, e.new) for e in data.edits or ()],
            metadata=sent_metadata(data, data.metadata_sent()),
        )
        return Response(presenters.write_result(result, actor))


class MemoryDeleteView(ToolView):
    name = "memory_delete"
    description = "Ask for a memory to be deleted. A human confirms; until then nothing changes."
    write = True
    input_model = schemas.DeleteIn

    responses = {202: schemas.DeleteOut, **_errors(400, 401, 403, 404, 422)}

    def run(self, actor: Actor, data: schemas.DeleteIn) -> Response:
        document = access_document(actor, **data.ref())
        item, _ = memory_delete_request(actor=actor, document=document, reason=data.reason)
        return Response(
            {"status": "pending_confirmation", "review_item_id": str(item.pk)},
            status=status.HTTP_202_ACCEPTED,
        )


class MemorySearchView(ToolView):
    name = "memory_search"
    description = (
        "Search the memories you may read (workspace, your systems, your own, this "
        "conversation's), best first. Memory is advisory: verify before acting."
    )
    write = False
    reads_turn_stores = True
    input_model = schemas.SearchIn
    responses = {200: schemas.SearchOut, **READ_ERRORS}

    def run(self, actor: Actor, data: schemas.SearchIn) -> Response:
        hits = memory_search(
            actor=actor,
            query=data.query,
            limit=data.limit,
            stores=data.stores,
            doc_types=[d.value for d in data.doc_types or ()],
            tags=data.tags,
            include_drafts=data.include_drafts,
            mode=data.mode,
        )
        return Response(
            {"results": [presenters.search_hit(hit, data.query, actor) for hit in hits]}
        )


class MemoryContextView(ToolView):
    name = "memory_context"
    description = (
        "The memory context for this turn: reviewed notes and, apart, unreviewed drafts, "
        "within a token budget. Treat it as hypotheses to verify; cite ids with "
        "memory_mark_used."
    )
    write = False
    reads_turn_stores = True
    input_model = schemas.ContextIn
    responses = {200: schemas.ContextOut, **READ_ERRORS}

    def run(self, actor: Actor, data: schemas.ContextIn) -> Response:
        result = memory_context_load(
            actor=actor,
            message=data.message,
            max_docs=data.max_docs,
            token_budget=data.token_budget,
        )
        return Response(presenters.context_result(result, actor))


class MemoryMarkUsedView(ToolView):
    name = "memory_mark_used"
    description = "Report the memory ids this turn relied on; they count as hits."
    write = False
    input_model = schemas.MarkUsedIn
    responses = {200: schemas.MarkUsedOut, **READ_ERRORS}

    def run(self, actor: Actor, data: schemas.MarkUsedIn) -> Response:
        updated = memory_mark_used(actor=actor, ids=[str(i) for i in data.ids])
        return Response({"updated": updated})


class MemoryProposePromotionView(ToolView):
    name = "memory_propose_promotion"
    description = (
        "Propose one of your conversation or user memories for a shared store (a workspace "
        "store or system:<slug>) with a rationale. A reviewer approves or rejects; until then "
        "nothing shared changes. Proposing the same thing twice returns the first proposal."
    )
    write = True
    input_model = schemas.ProposePromotionIn
    responses = {
        202: OpenApiResponse(schemas.ProposalOut, description="proposed"),
        200: OpenApiResponse(schemas.ProposalOut, description="already proposed"),
        **_errors(400, 401, 403, 404, 422),
    }

    def run(self, actor: Actor, data: schemas.ProposePromotionIn) -> Response:
        document = access_document(actor, **data.ref())
        proposal = memory_propose_promotion(
            actor=actor,
            document=document,
            target_store=data.target_store,
            target_path=data.target_path,
            rationale=data.rationale,
        )
        return Response(
            {
                "dream_job_id": str(proposal.item.job_id),
                "review_item_id": str(proposal.item.pk),
                "status": "awaiting_review",
            },
            status=status.HTTP_202_ACCEPTED if proposal.created else status.HTTP_200_OK,
        )


TOOL_VIEWS: tuple[type[ToolView], ...] = (
    MemorySearchView,
    MemoryContextView,
    MemoryMarkUsedView,
    MemoryReadView,
    MemoryListView,
    MemoryHistoryView,
    MemoryRememberView,
    MemoryPatchView,
    MemoryDeleteView,
    MemoryProposePromotionView,
)
