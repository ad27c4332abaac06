"""The form actions of the pages, reached by a GET.

After a refused save the page is drawn again from the POST, so the address
bar shows the form's action (`/mine/add`). Enter there, a bookmark or a
link shared from it is a GET, and Django's bare 405 answer is a blank page
with no way on: such a GET goes back to the page the form belongs to.
"""

from collections.abc import Callable
from functools import wraps

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST


def post_only(page: str | Callable[..., str]):
    """`require_POST`, but a GET (or HEAD) is sent to `page`: a URL name, or
    a function of the view's URL arguments giving the page's URL."""

    def decorator(view):
        posted = require_POST(view)

        @wraps(view)
        def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            if request.method in ("GET", "HEAD"):
                return redirect(page(**kwargs) if callable(page) else reverse(page))
            return posted(request, *args, **kwargs)

        return wrapper

    return decorator
