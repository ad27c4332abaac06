"""The runtime headers of a tool call, turned into an Actor."""

import json
import re

from pydantic import BaseModel, ValidationError
from rest_framework.request import Request

from memory_app.access import Turn, access_turn
from memory_app.actors import Actor
from memory_app.api.behalf import HEADER, principal_for
from memory_app.api.validation import RUNTIME_VALUE
from memory_app.errors import InvalidInput, reads_as_name
from memory_app.services.principals import TurnWanted

_HEADER_VALUE = re.compile(RUNTIME_VALUE, re.ASCII)


def _header(request: Request, name: str) -> str | None:
    value = request.headers.get(name)
    if value is None:
        return None
    value = value.strip()
    if not _HEADER_VALUE.match(value):
        raise InvalidInput(
            f"{name} is not valid.",
            fields={name: ["1 to 200 letters, digits or . _ : @ / + = -"]},
        )
    return value


def actor_from_request(request: Request, *, with_stores: bool = False) -> Actor:
    """Resolve X-Memory-On-Behalf-Of, X-Memory-Conversation and X-Memory-Run.

    Only holders of "act on behalf" may send the first (403 otherwise); a
    conversation the principal does not take part in is a 404. One that does
    not exist yet is only named (`conversation_name`): a write creates it
    together with what it writes (`conversation_claim`), never before its
    checks pass. The conversation comes with the stores the turn may draw
    on, in the same statement; `with_stores` asks for them when no
    conversation is named.
    """
    agent = request.user
    _header(request, HEADER)  # a malformed name is a 400 before any rights check
    user = principal_for(request)
    conversation_id = _header(request, "X-Memory-Conversation")
    known = getattr(request.auth, "turn", None)
    if known is not None and (known.user_id, known.external_id) != (user.pk, conversation_id):
        known = None
    turn = (
        access_turn(
            user=user,
            external_id=conversation_id,
            known=known and known.rows,
        )
        if conversation_id or with_stores
        else Turn(None, None)
    )
    return Actor(
        user=user,
        agent=agent,
        conversation=turn.conversation,
        run_id=_header(request, "X-Memory-Run") or "",
        conversation_name=conversation_id if conversation_id and turn.conversation is None else "",
        stores=turn.stores,
    )


def turn_wanted(request: Request, *, with_stores: bool) -> TurnWanted | None:
    """The turn `actor_from_request` will resolve, when the key's lookup can
    read it in its statement: the caller acts as themselves and names a
    well-formed conversation, or none where the stores are asked for."""
    if HEADER in request.headers:
        return None
    conversation_id = request.headers.get("X-Memory-Conversation")
    if conversation_id is None:
        return TurnWanted(None) if with_stores else None
    conversation_id = conversation_id.strip()
    return TurnWanted(conversation_id) if _HEADER_VALUE.match(conversation_id) else None


def _whole_numbers(value: object) -> object:
    """`value` with each number that has no fraction as an integer: JSON has
    one number type, and its Schema counts 18.0 as an integer."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: _whole_numbers(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_whole_numbers(item) for item in value]
    return value


def parse_input[M: BaseModel](model: type[M], data: object) -> M:
    """Validate a JSON body against a tool's input model, or 400 with field messages.

    Strictly, by JSON's types: a string or `true` where a number is wanted,
    or "yes" for a boolean, is refused rather than converted; strings still
    name ids, moments and choices, which JSON has no other way to say.
    """
    if not isinstance(data, dict):
        raise InvalidInput("The body must be a JSON object.", fields={"body": ["Send an object."]})
    try:
        return model.model_validate_json(json.dumps(_whole_numbers(data)), strict=True)
    except ValidationError as error:
        fields: dict[str, list[str]] = {}
        for problem in error.errors(include_url=False, include_input=False):
            loc, message = [str(part) for part in problem["loc"]], problem["msg"]
            if problem["type"] == "extra_forbidden" and not reads_as_name(loc[-1]):
                loc, message = loc[:-1], "An unknown field; its name is not repeated."
            fields.setdefault(".".join(loc) or "body", []).append(message)
        raise InvalidInput("The input is not valid.", fields=fields) from None
