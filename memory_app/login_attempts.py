"""Failed-login lockout for the sign-in pages (django-axes).

Axes counts failures per username and per address and refuses a locked-out
login before the password is checked. It needs the request to know the
address; `authenticate()` without one (the test client's `login`, scripts)
is not a sign-in through the web and is left to the ModelBackend.
"""

from axes.attempts import get_cool_off_threshold
from axes.backends import AxesStandaloneBackend
from axes.conf import settings
from axes.helpers import get_cool_off, get_failure_limit
from axes.models import AccessAttempt
from django.db.models import Sum
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from rest_framework.throttling import BaseThrottle


def client_address(request: HttpRequest) -> str | None:
    """The address a login comes from, read as the API's throttles read it
    (rest_framework's NUM_PROXIES, set from MEMORY_PROXY_COUNT): the
    connection's, or behind that many proxies the one the outermost saw.
    An X-Forwarded-For a client wrote itself is never taken."""
    return BaseThrottle().get_ident(request)


def clear_own_failures(sender, request, user, **kwargs) -> None:
    """A successful login clears the failures of its own account only: those
    against other accounts from the same address still count."""
    AccessAttempt.objects.filter(username=user.get_username()).delete()


class LoginAttemptsBackend(AxesStandaloneBackend):
    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)


def lockout_response(
    request: HttpRequest, original_response: HttpResponse | None = None, credentials=None
) -> HttpResponse:
    """The 429 page: whether this address or the account is paused, and for how long.

    Axes' own page named the username being tried even when the address was
    what is locked (failures for one name pause every name from there), and
    gave the pause as a timedelta ("0:15:00").
    """
    limit = get_failure_limit(request, credentials)
    failures_here = (
        AccessAttempt.objects.filter(
            ip_address=request.axes_ip_address,
            attempt_time__gte=get_cool_off_threshold(request),
        ).aggregate(total=Sum("failures_since_start"))["total"]
        or 0
    )
    context = {
        "failure_limit": limit,
        "address_paused": failures_here >= limit,
        "cool_off": get_cool_off(request),
    }
    return render(
        request, "registration/locked_out.html", context, status=settings.AXES_HTTP_RESPONSE_CODE
    )
