"""The one mapping from errors to the API's error shape (API.md, "Errors").

Every error leaves as `{"error": code, "detail": text, ...extra}`; nothing
reaches the client as an HTML page or a 500 with a traceback, and no
`Accept` header turns an answer into a 406 (validation.AnswerInJSON).
"""

import logging

from django.core.exceptions import RequestDataTooBig
from django.http import Http404, JsonResponse
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import set_rollback

from memory_app.errors import ApplicationError, RateLimited, TooLarge

logger = logging.getLogger(__name__)

_DRF_CODES = {
    exceptions.NotAuthenticated: ("not_authenticated", status.HTTP_401_UNAUTHORIZED),
    exceptions.AuthenticationFailed: ("not_authenticated", status.HTTP_401_UNAUTHORIZED),
    exceptions.PermissionDenied: ("permission_denied", status.HTTP_403_FORBIDDEN),
    exceptions.NotFound: ("not_found", status.HTTP_404_NOT_FOUND),
    exceptions.MethodNotAllowed: ("method_not_allowed", status.HTTP_405_METHOD_NOT_ALLOWED),
    exceptions.Throttled: ("rate_limited", status.HTTP_429_TOO_MANY_REQUESTS),
    exceptions.ParseError: ("invalid_input", status.HTTP_400_BAD_REQUEST),
}


def not_found(request, exception=None) -> JsonResponse:
    """An unknown path under /api/ (the project's 404 handler sends those here)."""
    return JsonResponse({"error": "not_found", "detail": "Not found."}, status=404)


def permission_denied(request, exception=None) -> JsonResponse:
    """A refusal raised outside DRF under /api/, in the error shape."""
    detail = str(exception or "") or "You may not do this."
    return JsonResponse({"error": "permission_denied", "detail": detail}, status=403)


def error_response(code: str, detail: str, http_status: int, **extra) -> Response:
    return Response({"error": code, "detail": detail, **extra}, status=http_status)


def _field_messages(detail) -> dict[str, list[str]]:
    if isinstance(detail, dict):
        return {
            str(name): [str(m) for m in (msgs if isinstance(msgs, list) else [msgs])]
            for name, msgs in detail.items()
        }
    messages = detail if isinstance(detail, list) else [detail]
    return {"non_field_errors": [str(m) for m in messages]}


def exception_handler(exc, context):
    set_rollback()
    if isinstance(exc, ApplicationError):
        response = error_response(exc.code, exc.detail, exc.status, **exc.extra)
        if isinstance(exc, RateLimited):
            response["Retry-After"] = str(exc.retry_after)
        return response
    if isinstance(exc, RequestDataTooBig):
        too_large = TooLarge.body()
        return error_response(too_large.code, too_large.detail, too_large.status)
    if isinstance(exc, Http404):
        return error_response("not_found", "Not found.", status.HTTP_404_NOT_FOUND)
    if isinstance(exc, exceptions.UnsupportedMediaType):
        message = "Send the body as JSON, with Content-Type: application/json."
        return error_response(
            "invalid_input",
            "The body must be JSON (Content-Type: application/json).",
            status.HTTP_400_BAD_REQUEST,
            fields={"Content-Type": [message]},
        )
    if isinstance(exc, exceptions.ValidationError):
        return error_response(
            "invalid_input",
            "The input is not valid.",
            status.HTTP_400_BAD_REQUEST,
            fields=_field_messages(exc.detail),
        )
    for exc_class, (code, http_status) in _DRF_CODES.items():
        if isinstance(exc, exc_class):
            response = error_response(code, str(exc.detail), http_status)
            if isinstance(exc, exceptions.Throttled) and exc.wait is not None:
                response["Retry-After"] = str(int(exc.wait) + 1)
            if http_status == status.HTTP_401_UNAUTHORIZED:
                response["WWW-Authenticate"] = 'Token realm="api"'
            return response
    if isinstance(exc, exceptions.APIException):
        return error_response("error", str(exc.detail), exc.status_code)
    logger.exception("unhandled error in %s", context.get("view").__class__.__name__)
    return error_response(
        "server_error", "Something went wrong on our side.", status.HTTP_500_INTERNAL_SERVER_ERROR
    )
