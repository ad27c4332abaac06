"""The one mapping from service errors to what a page shows.

Forbidden and not-found become 403 and 404 pages; every other service
error becomes a message on the page the person came from.
"""

from collections.abc import Iterator
from contextlib import contextmanager

from django.contrib import messages
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404, HttpRequest

from memory_app.errors import ApplicationError, NotFound, PermissionDenied
from memory_app.policy import check_can_review


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


def require_reviewer(request: HttpRequest) -> None:
    """403 unless the person may review promotions (humans only)."""
    with page_errors(request):
        check_can_review(request.user)
