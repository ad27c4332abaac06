"""Review and admin endpoints for people with review rights (API.md)."""

import base64
import binascii
import uuid
from datetime import datetime

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.response import Response

from memory_app.access import access_document
from memory_app.actors import actor_for
from memory_app.api import presenters, schemas
from memory_app.api.context import parse_input
from memory_app.errors import InvalidInput
from memory_app.models import DreamReviewItem, ReviewStatus
from memory_app.policy import check_can_redact, check_can_review
from memory_app.selectors.documents import document_version
from memory_app.selectors.review import review_items
from memory_app.services.curate import document_always_inject_set, document_rollback
from memory_app.services.promote import DECIDED_HERE, promotion_approve, promotion_reject
from memory_app.services.redact import document_redact, redaction_span

STATUSES = {
    "pending": [ReviewStatus.PENDING, ReviewStatus.DEFERRED],
    **{s: [s] for s in (ReviewStatus.APPROVED, ReviewStatus.REJECTED)},
}
PAGE = 50


def _cursor(item: DreamReviewItem) -> str:
    raw = f"{item.created_at.isoformat()}|{item.pk}"
    return base64.urlsafe_b64encode(raw.encode()).decode()


def _after(cursor: str) -> tuple[datetime, uuid.UUID]:
    """The position a cursor holds. One this API wrote holds an aware time and
    an item id; a crafted one may hold anything, and an id that is not a UUID
    or a naive time had reached the query and answered 500."""
    try:
        created, item_id = base64.urlsafe_b64decode(cursor.encode()).decode().split("|")
        moment, item = datetime.fromisoformat(created), uuid.UUID(item_id)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        moment = None
    if moment is None or moment.tzinfo is None:
        raise InvalidInput("Not a cursor from this API.", fields={"cursor": ["Invalid."]})
    return moment, item


@extend_schema(
    operation_id="promotions_list",
    tags=["review"],
    parameters=[
        OpenApiParameter("status", str, enum=list(STATUSES), description="Default: pending."),
        OpenApiParameter("cursor", str),
    ],
    responses={200: schemas.ReviewItemListOut, 403: schemas.ErrorOut},
)
@api_view(["GET", "HEAD"])
def promotions_list(request: Request) -> Response:
    check_can_review(request.user)
    wanted = request.query_params.get("status", "pending")
    if wanted not in STATUSES:
        raise InvalidInput("Unknown status.", fields={"status": [f"One of {', '.join(STATUSES)}."]})
    # Everything approve and reject decide: agents' promotions and the
    # merges and supersessions dream jobs propose (`action` tells them apart).
    items = review_items(action=DECIDED_HERE).filter(status__in=STATUSES[wanted])
    if cursor := request.query_params.get("cursor"):
        created, item_id = _after(cursor)
        items = items.filter(created_at__gte=created).exclude(created_at=created, id__lte=item_id)
    page = list(items[: PAGE + 1])
    return Response(
        {
            "items": [presenters.review_item(item) for item in page[:PAGE]],
            "next_cursor": _cursor(page[PAGE - 1]) if len(page) > PAGE else None,
        }
    )


@extend_schema(
    operation_id="promotion_approve",
    tags=["review"],
    request=schemas.ApproveIn,
    responses={
        200: schemas.DocumentOut,
        403: schemas.ErrorOut,
        404: schemas.ErrorOut,
        422: schemas.ErrorOut,
    },
)
@api_view(["POST"])
def promotion_approve_view(request: Request, item_id) -> Response:
    data = parse_input(schemas.ApproveIn, request.data)
    document = promotion_approve(
        user=request.user,
        item_id=item_id,
        note=data.note,
        content=data.content,
        keep_apart=data.keep_apart,
    )
    # Not read again through the reviewer's access: reviewers approve into
    # system stores their teams may not read, and the approval stands; the
    # answer is the document they just placed there.
    return _presented(request, document)


@extend_schema(
    operation_id="promotion_reject",
    tags=["review"],
    request=schemas.RejectIn,
    responses={
        200: schemas.ReviewItemOut,
        403: schemas.ErrorOut,
        404: schemas.ErrorOut,
        422: schemas.ErrorOut,
    },
)
@api_view(["POST"])
def promotion_reject_view(request: Request, item_id) -> Response:
    data = parse_input(schemas.RejectIn, request.data)
    item = promotion_reject(user=request.user, item_id=item_id, note=data.note)
    return Response(presenters.review_item(item))


@extend_schema(
    operation_id="document_always_inject",
    tags=["review"],
    request=schemas.AlwaysInjectIn,
    responses={200: schemas.DocumentOut, 403: schemas.ErrorOut, 404: schemas.ErrorOut},
)
@api_view(["POST"])
def always_inject_view(request: Request, document_id) -> Response:
    data = parse_input(schemas.AlwaysInjectIn, request.data)
    document = access_document(actor_for(request.user), id=document_id)
    document = document_always_inject_set(user=request.user, document=document, value=data.value)
    return _document(request, document)


@extend_schema(
    operation_id="document_rollback",
    tags=["review"],
    request=schemas.RollbackIn,
    responses={200: schemas.DocumentOut, 403: schemas.ErrorOut, 404: schemas.ErrorOut},
)
@api_view(["POST"])
def rollback_view(request: Request, document_id) -> Response:
    data = parse_input(schemas.RollbackIn, request.data)
    document = access_document(actor_for(request.user), id=document_id)
    document = document_rollback(
        user=request.user, document=document, version=data.version, reason=data.reason
    )
    return _document(request, document)


@extend_schema(
    operation_id="document_redact",
    tags=["review"],
    request=schemas.RedactIn,
    responses={
        200: schemas.DocumentOut,
        400: schemas.ErrorOut,
        403: schemas.ErrorOut,
        404: schemas.ErrorOut,
    },
)
@api_view(["POST"])
def redact_view(request: Request, document_id) -> Response:
    """Remove a secret from the document's whole history (reviewers; owners of
    a user store). The text is never echoed: not in the answer, not in events."""
    data = parse_input(schemas.RedactIn, request.data)
    # As on the document page: a reviewer reaches the drafts their review
    # items name, which is where a slipped secret is found.
    document = access_document(actor_for(request.user), id=document_id, reviewing=True)
    check_can_redact(request.user, document)
    text = data.text
    if text is None:
        text = redaction_span(document, start=data.start, end=data.end, version=data.version)
    result = document_redact(user=request.user, document=document, text=text)
    return _presented(request, result.document)


def _document(request: Request, document) -> Response:
    """The document as the caller may read it now."""
    return _presented(request, access_document(actor_for(request.user), id=document.pk))


def _presented(request: Request, document) -> Response:
    actor = actor_for(request.user)
    return Response(presenters.document_detail(document, document_version(document, None), actor))
