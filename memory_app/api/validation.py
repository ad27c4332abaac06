"""Input the database or the models cannot hold, refused at the door with a 400.

PostgreSQL refuses NUL in text and lone UTF-16 surrogates in UTF-8, and
Python's JSON decoder recurses once per nesting level: each used to surface
as a 500 deep inside a service. The parser and the middleware below check
every JSON body, query parameter and runtime header before any view runs,
and name the offending field the way the models do (`source_refs.0.ref`).
The middleware also reads a body sent without a Content-Length, which
Django and DRF would otherwise take for none, under the same size limit.
"""

import codecs
import io
import json
import re
from typing import IO

from django.conf import settings
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpRequest, JsonResponse
from rest_framework import exceptions
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import JSONParser

from memory_app.errors import ApplicationError, InvalidInput, TooLarge

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
# Where a query parameter whose name is bad is reported: not by its name.
QUERY_STRING = "query string"
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


class AnswerInJSON(DefaultContentNegotiation):
    """A view answers in its own format whatever the client accepts.

    An endpoint that offers a choice (the schema: YAML or JSON) still follows
    `Accept`; every other answers JSON, as API.md fixes. A client accepting
    only `text/html` or `text/event-stream` thus still learns that its token
    is missing (401) or its cursor bad (400), instead of a 406 that hides why.
    Here beside the parser, and not in api/errors.py, because DRF's views
    module imports this class as it loads, and errors.py imports that module.
    """

    def select_renderer(self, request, renderers, format_suffix=None):
        try:
            return super().select_renderer(request, renderers, format_suffix)
        except exceptions.NotAcceptable:
            return renderers[0], renderers[0].media_type


def _encoding_problem(request: HttpRequest) -> InvalidInput | None:
    """A 400 for a body sent compressed (any `Content-Encoding` but identity).

    The parser reads the bytes as they came: a gzipped body was answered
    "Not UTF-8", and one that happened to decode was read as sent. Refused
    with a 400 naming the header, as a wrong Content-Type is.
    """
    sent = request.headers.get("Content-Encoding", "")
    codings = {coding.strip().lower() for coding in sent.split(",")} - {"", "identity"}
    if codings:
        return _refuse(
            "Content-Encoding", "Send the body uncompressed, without a Content-Encoding."
        )
    return None


def request_problem(request: HttpRequest) -> InvalidInput | None:
    """A 400 for a query parameter, runtime header or body encoding the API
    cannot use. A bad parameter name is reported under `query string`: the
    name itself cannot be shown, and `query` is a tool argument."""
    for name, limit in HEADER_LIMITS.items():
        value = request.headers.get(name)
        if value is None:
            continue
        if len(value) > limit:
            return _refuse(name, f"At most {limit} characters.")
        if problem := text_problem(value):
            return _refuse(name, problem)
    if problem := _encoding_problem(request):
        return problem
    for name, values in request.GET.lists():
        if problem := text_problem(name):
            return _refuse(QUERY_STRING, f"A parameter name has a bad character: {problem}")
        for value in values:
            if "\ufffd" in value:
                return _refuse(name, "Not UTF-8.")
            if problem := text_problem(value):
                return _refuse(name, problem)
    return None


def _unsized_body(request: HttpRequest) -> IO[bytes] | None:
    """Where a body sent without Content-Length (`Transfer-Encoding: chunked`)
    can be read from, or None when it cannot be.

    Django and DRF read a body by its Content-Length alone and take a missing
    one for no body. Under ASGI the handler has already received the whole
    body into the request's stream. Under WSGI the server must have removed
    the chunk framing and mark the input as ending with the body
    (`wsgi.input_terminated`, as gunicorn and mod_wsgi do): reading the raw
    input of any other server would wait on the connection for more.
    """
    if isinstance(request, ASGIRequest):
        return request._stream
    if request.META.get("wsgi.input_terminated"):
        return request.META["wsgi.input"]
    return None


def body_problem(request: HttpRequest) -> ApplicationError | None:
    """A 413 for a body sent without Content-Length over the body limit.

    Such a body is read here, at most one byte past the limit, and handed on
    with its length, so the parser sees it as it sees any other body and the
    limit holds for both (Django checks a declared length by itself).
    """
    if request.META.get("CONTENT_LENGTH") or (source := _unsized_body(request)) is None:
        return None
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    body = source.read(limit + 1)
    if len(body) > limit:
        return TooLarge.body()
    if body:
        request._stream = io.BytesIO(body)
        request.META["CONTENT_LENGTH"] = str(len(body))
    return None


class ApiInputMiddleware:
    """Runs `request_problem` and `body_problem` on every `/api/` request,
    answering the error envelope."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest):
        if request.path.startswith("/api/") and (
            problem := request_problem(request) or body_problem(request)
        ):
            return JsonResponse(
                {"error": problem.code, "detail": problem.detail, **problem.extra},
                status=problem.status,
            )
        return self.get_response(request)
