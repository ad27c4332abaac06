"""Failed-login lockout for the sign-in pages (django-axes).

Axes counts failures per username and per address and refuses a locked-out
login before the password is checked. It needs the request to know the
address; `authenticate()` without one (the test client's `login`, scripts)
is not a sign-in through the web and is left to the ModelBackend.
"""

from axes.backends import AxesStandaloneBackend


class LoginAttemptsBackend(AxesStandaloneBackend):
    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)
