"""The one mapping from service errors to what a page shows.

Forbidden and not-found become 403 and 404 pages inside the app's layout,
with the reason; every other service error becomes a message on the page
the person came from, but for a typed note or reason the service refused,
which its form shows again with the error under it (refusal_under). Under
/api/ the same refusals keep the API's error shape. A form the server
will not read (too large, too many fields) gets a page of the app with
the reason too.
"""

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.log import log_response
from django.views.decorators.csrf import requires_csrf_token

from memory_app.api import errors as api_errors
from memory_app.errors import ApplicationError, NotFound, PermissionDenied
from memory_app.policy import check_can_review

NOT_FOUND = "There is nothing at this address, or nothing you may see."
FORBIDDEN = "Your account may not use this page."
BAD_REQUEST = "The server could not read this request. Go back and try again."
CSRF_REFUSED = (
    "The form was sent without its security token, or with one from an older "
    "session. Reload the page (log in again if asked) and send it again."
)


@contextmanager
def page_errors(request: HttpRequest) -> Iterator[None]:
    try:
        yield
    except PermissionDenied as error:
        raise DjangoPermissionDenied(error.detail) from error
    except NotFound as error:
        raise Http404(error.detail) from error
    except ApplicationError as error:
        messages.error(request, error.detail)


def refusal_under(request: HttpRequest, error: ApplicationError, field: str) -> str:
    """The error a form drawn again shows under `field` after a service
    refused the write: the refusal when it concerns that field (a scanner
    finding in it, a value it may not hold). Another refusal (the old text
    a rollback would bring back) is a message on the page instead, and the
    field shows none: the text typed there was not what was wrong."""
    findings = {finding["field"] for finding in error.extra.get("findings", ())}
    if field in findings or field in (error.extra.get("fields") or {}):
        return error.detail
    messages.error(request, error.detail)
    return ""


def require_reviewer(request: HttpRequest, doing: str = "Deciding promotions") -> None:
    """403 unless the person may decide reviews (a person with the review
    right whose groups leave them "read memory"); the page says what `doing`
    needed, and which of the two is missing."""
    with page_errors(request):
        check_can_review(request.user, doing)


def refusal_reason(exception: BaseException | None, default: str) -> str:
    """The message a refusal was raised with; URL resolution's own (a dict
    of tried patterns) is not for people."""
    message = exception.args[0] if exception is not None and exception.args else None
    return message if isinstance(message, str) and message else default


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


@requires_csrf_token
def not_found_page(request: HttpRequest, exception: BaseException | None = None) -> HttpResponse:
    """The project's 404 handler."""
    if _is_api(request):
        return api_errors.not_found(request, exception)
    context = {"reason": refusal_reason(exception, NOT_FOUND)}
    return render(request, "404.html", context, status=404)


@requires_csrf_token
def permission_denied_page(
    request: HttpRequest, exception: BaseException | None = None
) -> HttpResponse:
    """The project's 403 handler."""
    if _is_api(request):
        return api_errors.permission_denied(request, exception)
    context = {"reason": refusal_reason(exception, FORBIDDEN)}
    return render(request, "403.html", context, status=403)


@requires_csrf_token
def csrf_failure_page(request: HttpRequest, reason: str = "") -> HttpResponse:
    """The project's CSRF failure view: the 403 page with what to do next,
    not Django's bare one, which speaks to developers (`reason` too)."""
    if _is_api(request):
        return api_errors.permission_denied(request, DjangoPermissionDenied(CSRF_REFUSED))
    context = {"reason": CSRF_REFUSED, "form_expired": True}
    return render(request, "403.html", context, status=403)


def _unread_request(exception: BaseException | None) -> tuple[int, str] | None:
    """The status and reason for a request refused before it was read: a
    body over MEMORY_MAX_BODY_BYTES (413, as the API answers it) or more
    fields than DATA_UPLOAD_MAX_NUMBER_FIELDS. None for any other 400."""
    if isinstance(exception, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return 413, (
            f"The form is larger than the server accepts ({limit} bytes). "
            "Go back, shorten what you typed, and send it again."
        )
    if isinstance(exception, TooManyFieldsSent):
        limit = settings.DATA_UPLOAD_MAX_NUMBER_FIELDS
        return 400, (
            f"The form has more fields than the server accepts ({limit}). "
            "Go back, select fewer items, and send it again in parts."
        )
    return None


@requires_csrf_token
def bad_request_page(request: HttpRequest, exception: BaseException | None = None) -> HttpResponse:
    """The project's 400 handler: the app's page with the reason.

    A form too large is the app working, not an attack: logged here as one
    warning line (what Django logs after a handler's answer is then left
    out), where Django would log an error with its traceback. Other
    requests it refuses (an unknown host) keep Django's own log line."""
    unread = _unread_request(exception)
    status, reason = unread or (400, BAD_REQUEST)
    if _is_api(request):
        # The API reads its bodies itself (413 for one too large); what
        # reaches here (an unknown host) is the request as a whole.
        detail = "The request could not be read."
        response = JsonResponse({"error": "invalid_input", "detail": detail}, status=400)
    else:
        response = render(request, "400.html", {"reason": reason}, status=status)
    if unread:
        log_response(
            "%s (%s): %s",
            response.reason_phrase,
            reason,
            request.path,
            response=response,
            request=request,
            logger=logging.getLogger(f"django.security.{type(exception).__name__}"),
        )
    return response
