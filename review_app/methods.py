"""Which HTTP methods a page or a form action answers, and what the others get.

A page answers GET and HEAD (HEAD as GET, without the body: Django's
`require_safe`); a form action answers POST. Any other method gets the
app's 405 page, which says what the address is for: Django's own answer is
an empty body.

After a refused save the page is drawn again from the POST, so the address
bar shows the form's action (`/mine/add`). Enter there, a bookmark or a
link shared from it is a GET, and a 405 is a page with no way on: such a
GET goes back to the page the form belongs to.
"""

from collections.abc import Callable
from functools import wraps

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.log import log_response

SAFE = ("GET", "HEAD")


def not_allowed(request: HttpRequest, allowed: tuple[str, ...]) -> HttpResponse:
    """The 405 page, logged as Django logs its own (one warning line)."""
    reason = (
        "This address is a page: open it, and send its forms from it."
        if "POST" not in allowed
        else "This address takes a form sent from its page."
    )
    response = render(request, "405.html", {"reason": reason}, status=405)
    response["Allow"] = ", ".join(allowed)
    log_response(
        "Method Not Allowed (%s): %s",
        request.method,
        request.path,
        response=response,
        request=request,
    )
    return response


def allow(*methods: str):
    """`require_http_methods`, answering any other method with the 405 page."""

    def decorator(view):
        @wraps(view)
        def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            if request.method not in methods:
                return not_allowed(request, methods)
            return view(request, *args, **kwargs)

        return wrapper

    return decorator


# A page: GET, and HEAD answered as GET without the body (`require_safe`).
page_view = allow(*SAFE)


def post_only(page: str | Callable[..., str]):
    """A form action: POST; a GET (or HEAD) is sent to `page`, a URL name
    or a function of the view's URL arguments giving the page's URL."""

    def decorator(view):
        posted = allow("POST")(view)

        @wraps(view)
        def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            if request.method in SAFE:
                return redirect(page(**kwargs) if callable(page) else reverse(page))
            return posted(request, *args, **kwargs)

        return wrapper

    return decorator


def page_and_form(page, form):
    """One address for a page (GET, HEAD) and the form it sends (POST),
    each answered by its own view; any other method gets the 405 page."""

    @allow(*SAFE, "POST")
    def view(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        answer = form if request.method == "POST" else page
        return answer(request, *args, **kwargs)

    return view
