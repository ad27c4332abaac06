"""Answers carrying memory are kept out of shared and browser caches."""

from django.http import HttpRequest, HttpResponse

PRIVATE = "no-store, private"


class PrivateAnswersMiddleware:
    """`Cache-Control: no-store, private` on every answer whose view did not
    choose its own.

    Pages and tool answers carry memory, a new webhook's signing secret is
    shown once, an export holds everything: none may be kept by a proxy, or
    by the browser for whoever uses the machine next (Back after logout).
    Static files are answered before this middleware and stay cacheable.
    """

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if "Cache-Control" not in response:
            response["Cache-Control"] = PRIVATE
        return response
