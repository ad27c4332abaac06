"""The one mapping from service errors to what a page shows.

Forbidden and not-found become 403 and 404 pages inside the app's layout,
with the reason; every other service error becomes a message on the page
the person came from. Under /api/ the same refusals keep the API's error
shape.
"""

from collections.abc import Iterator
from contextlib import contextmanager

from django.contrib import messages
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.csrf import requires_csrf_token

from memory_app.api import errors as api_errors
from memory_app.errors import ApplicationError, NotFound, PermissionDenied
from memory_app.policy import check_can_review

NOT_FOUND = "There is nothing at this address, or nothing you may see."
FORBIDDEN = "Your account may not use this page."
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
