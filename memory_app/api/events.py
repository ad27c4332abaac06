"""`GET /api/v1/events`: the outbox, in order, by cursor."""

from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.response import Response

from memory_app.actors import Actor
from memory_app.api.behalf import principal_for
from memory_app.api.validation import RUNTIME_VALUE_SCHEMA
from memory_app.errors import InvalidInput, NotFound
from memory_app.models import Conversation, MemoryEvent
from memory_app.policy import check_can_read
from memory_app.selectors.events import events_after

PAGE = 100
MAX_PAGE = 500
MAX_ID = 2**63 - 1


def _int_param(request: Request, name: str, default: int, minimum: int, maximum: int) -> int:
    raw = request.query_params.get(name)
    if raw in (None, ""):
        return default
    try:
        value = int(raw)
    except ValueError:
        raise InvalidInput(
            f"{name} must be an integer.", fields={name: ["Not an integer."]}
        ) from None
    if not minimum <= value <= maximum:
        raise InvalidInput(f"{name} is out of range.", fields={name: ["Out of range."]})
    return value


@extend_schema(
    operation_id="events_list",
    summary="Events after a cursor, oldest first",
    parameters=[
        OpenApiParameter(
            "after",
            {"type": "integer", "minimum": 0, "maximum": MAX_ID},
            description="Return events with a larger id.",
        ),
        OpenApiParameter(
            "conversation", RUNTIME_VALUE_SCHEMA, description="Only this conversation's events."
        ),
        OpenApiParameter(
            "limit",
            {"type": "integer", "minimum": 1, "maximum": MAX_PAGE},
            description=f"At most this many (default {PAGE}).",
        ),
        OpenApiParameter(
            "X-Memory-On-Behalf-Of",
            RUNTIME_VALUE_SCHEMA,
            OpenApiParameter.HEADER,
            description="Read as this user (needs the act-on-behalf permission).",
        ),
    ],
    responses=inline_serializer(
        "EventPage",
        {
            "events": serializers.ListField(child=serializers.DictField()),
            "next_after": serializers.IntegerField(),
        },
    ),
    tags=["events"],
)
@api_view(["GET", "HEAD"])
def events_list(request: Request) -> Response:
    after = _int_param(request, "after", 0, minimum=0, maximum=MAX_ID)
    limit = _int_param(request, "limit", PAGE, minimum=1, maximum=MAX_PAGE)
    events = events_page(request, after=after, limit=limit)
    return Response(
        {
            "events": [event_json(event) for event in events],
            "next_after": events[-1].id if events else after,
        }
    )


def events_page(request: Request, *, after: int, limit: int) -> list[MemoryEvent]:
    """The events after a cursor that this request may see (in the
    On-Behalf-Of user's own scope, when one is named: `access.events_readable`):
    the polling endpoint and the stream (api/stream.py) both read through
    here."""
    actor = Actor(user=principal_for(request), agent=request.user)
    # As for the read tools: both the caller and the user it acts for need
    # "read memory" (events name documents, their paths and stores).
    check_can_read(actor)
    conversation = None
    if external_id := request.query_params.get("conversation"):
        # A filter never creates the conversation it names.
        conversation = Conversation.objects.filter(
            external_id=external_id[:200], participants=actor.user
        ).first()
        if conversation is None:
            raise NotFound("No such conversation.")
    return events_after(actor, after=after, conversation=conversation, limit=limit)


def event_json(event: MemoryEvent) -> dict:
    return {
        "id": event.id,
        "type": event.type,
        "created_at": event.created_at.isoformat(),
        "payload": event.payload,
    }
