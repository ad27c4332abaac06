"""How a person likes diffs laid out: unified or split.

Chosen with a plain link (`?diff=split`, so it works without JavaScript) and
remembered in the session, so the choice holds on the queue and on every
document page until changed.
"""

from django.http import HttpRequest

DIFF_VIEWS = ("unified", "split")
_SESSION_KEY = "diff_view"


def diff_view(request: HttpRequest) -> str:
    chosen = request.GET.get("diff")
    if chosen in DIFF_VIEWS:
        if request.session.get(_SESSION_KEY) != chosen:
            request.session[_SESSION_KEY] = chosen
        return chosen
    return request.session.get(_SESSION_KEY, DIFF_VIEWS[0])
