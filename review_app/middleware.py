"""Middleware of the pages."""

from urllib.parse import urlencode, urlsplit

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import resolve_url
from django_htmx.http import HttpResponseClientRedirect


class HtmxLoginRedirectMiddleware:
    """An htmx request whose session has ended is sent to the login page as
    a whole page (HX-Redirect), coming back to the page it was made from.

    htmx follows an ordinary redirect itself and swaps what it gets into
    the part of the page it asked for: the login form turned up nested
    inside the search results, and the address bar pointed at the login
    page with the fragment's address to come back to.
    """

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if not request.htmx or response.status_code != 302:
            return response
        login = resolve_url(settings.LOGIN_URL)
        if urlsplit(response["Location"]).path != login:
            return response
        page = request.htmx.current_url_abs_path or "/"
        return HttpResponseClientRedirect(f"{login}?{urlencode({'next': page})}")
