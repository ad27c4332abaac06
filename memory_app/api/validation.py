"""Input the database or the models cannot hold, refused at the door with a 400.

PostgreSQL refuses NUL in text and lone UTF-16 surrogates in UTF-8, and
Python's JSON decoder recurses once per nesting level: each used to surface
as a 500 deep inside a service. The parser and the middleware below check
every JSON body, query parameter and runtime header before any view runs,
and name the offending field the way the models do (`source_refs.0.ref`).
"""

import codecs
import json
import re

from django.http import HttpRequest, JsonResponse
from rest_framework.parsers import JSONParser

from memory_app.errors import InvalidInput

# Deeper than any input model (entities and source refs are two levels).
MAX_DEPTH = 16
# C0 controls but tab, newline and carriage return; DEL and the C1 controls;
# the bidirectional embeddings, overrides and isolates, which make a reviewer
# read text in another order than it is stored ("Trojan Source"; the marks
# LRM, RLM and ALM that right-to-left writing uses reorder nothing and stay);
# lone surrogates (valid in JSON escapes, impossible in UTF-8).
_CONTROLS = r"\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069"
_FORBIDDEN = re.compile(rf"[{_CONTROLS}\ud800-\udfff]")
# The rule for the OpenAPI document. Surrogates stay out: regex dialects
# that work on code points cannot name them.
TEXT_PATTERN = f"^[^{_CONTROLS}]*$"
# A conversation id, run id or username in a header or query parameter
# (ASCII: the OpenAPI document's regex dialect reads \w as ASCII too).
RUNTIME_VALUE = r"^[\w.:@/+=-]{1,200}$"
RUNTIME_VALUE_SCHEMA = {"type": "string", "pattern": RUNTIME_VALUE, "maxLength": 200}
# The headers the API reads, with the longest value it accepts.
HEADER_LIMITS = {
    "Authorization": 512,
    "X-Memory-Conversation": 200,
    "X-Memory-Run": 200,
    "X-Memory-On-Behalf-Of": 200,
}


def text_problem(value: str) -> str | None:
    """Why `value` cannot be stored as text, or None when it can."""
    if match := _FORBIDDEN.search(value):
        code = ord(match.group())
        what = "Lone surrogate" if 0xD800 <= code <= 0xDFFF else "Control character"
        return f"{what} U+{code:04X} at position {match.start()}."
    return None


def _refuse(field: str, message: str) -> InvalidInput:
    return InvalidInput(f"{field} is not valid.", fields={field: [message]})


def check_json_value(data: object) -> None:
    """Depth and characters of a decoded JSON document, keys included.

    Iterative, so a hostile document cannot exhaust the stack here either.
    """
    stack: list[tuple[object, str, int]] = [(data, "", 1)]
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, str):
            if problem := text_problem(value):
                raise _refuse(path or "body", problem)
            continue
        if not isinstance(value, dict | list):
            continue
        if depth > MAX_DEPTH:
            raise _refuse(path or "body", f"Nested deeper than {MAX_DEPTH} levels.")
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, child in items:
            name = f"{path}.{key}" if path else str(key)
            if isinstance(key, str) and (problem := text_problem(key)):
                raise _refuse(path or "body", f"A key has a bad character: {problem}")
            stack.append((child, name, depth + 1))


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")


class StrictJSONParser(JSONParser):
    """DRF's JSON parser, refusing what cannot be stored (see the module)."""

    def parse(self, stream, media_type=None, parser_context=None):
        raw = stream.read() if stream is not None else b""
        try:
            text = codecs.decode(raw, "utf-8")
        except UnicodeDecodeError as error:
            raise _refuse("body", f"Not UTF-8 (byte {error.start}).") from None
        try:
            data = json.loads(text, parse_constant=_no_constant)
        except RecursionError:
            raise _refuse("body", f"Nested deeper than {MAX_DEPTH} levels.") from None
        except ValueError as error:
            raise _refuse("body", f"Not JSON: {error}") from None
        check_json_value(data)
        return data


def request_problem(request: HttpRequest) -> InvalidInput | None:
    """A 400 for a query parameter or runtime header the API cannot use."""
    for name, limit in HEADER_LIMITS.items():
        value = request.headers.get(name)
        if value is None:
            continue
        if len(value) > limit:
            return _refuse(name, f"At most {limit} characters.")
        if problem := text_problem(value):
            return _refuse(name, problem)
    for name, values in request.GET.lists():
        if problem := text_problem(name):
            return _refuse("query", problem)
        for value in values:
            if "\ufffd" in value:
                return _refuse(name, "Not UTF-8.")
            if problem := text_problem(value):
                return _refuse(name, problem)
    return None


class ApiInputMiddleware:
    """Runs `request_problem` on every `/api/` request, answering the error envelope."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest):
        if request.path.startswith("/api/") and (problem := request_problem(request)):
            return JsonResponse(
                {"error": problem.code, "detail": problem.detail, **problem.extra},
                status=problem.status,
            )
        return self.get_response(request)
