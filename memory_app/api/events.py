"""`GET /api/v1/events`: the outbox, in order, by cursor."""

from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.response import Response

from memory_app.errors import InvalidInput, NotFound
from memory_app.models import Conversation
from memory_app.selectors.events import events_after

PAGE = 100


def _int_param(request: Request, name: str, default: int, maximum: int | None = None) -> int:
    raw = request.query_params.get(name)
    if raw in (None, ""):
        return default
    try:
        value = int(raw)
    except ValueError:
        raise InvalidInput(
            f"{name} must be an integer.", fields={name: ["Not an integer."]}
        ) from None
    if value < 0 or (maximum is not None and value > maximum):
        raise InvalidInput(f"{name} is out of range.", fields={name: ["Out of range."]})
    return value


@extend_schema(
    operation_id="events_list",
    summary="Events after a cursor, oldest first",
    parameters=[
        OpenApiParameter("after", int, description="Return events with a larger id."),
        OpenApiParameter("conversation", str, description="Only this conversation's events."),
        OpenApiParameter("limit", int, description="At most this many (1-500, default 100)."),
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
@api_view(["GET"])
def events_list(request: Request) -> Response:
    after = _int_param(request, "after", 0, maximum=2**63 - 1)
    limit = max(1, _int_param(request, "limit", PAGE, maximum=500))
    conversation = None
    if external_id := request.query_params.get("conversation"):
        # A filter never creates the conversation it names.
        conversation = Conversation.objects.filter(
            external_id=external_id[:200], participants=request.user
        ).first()
        if conversation is None:
            raise NotFound("No such conversation.")
    events = events_after(request.user, after=after, conversation=conversation, limit=limit)
    return Response(
        {
            "events": [
                {
                    "id": event.id,
                    "type": event.type,
                    "created_at": event.created_at.isoformat(),
                    "payload": event.payload,
                }
                for event in events
            ],
            "next_after": events[-1].id if events else after,
        }
    )
