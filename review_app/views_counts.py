"""The counts in the navigation badges: what waits for this person.

Each badge loads with the page and reloads on the `queue-changed` event a
decision's response fires, so it is right at once after a decision.
"""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse

from memory_app.permissions import can_decide_reviews
from review_app.methods import page_view
from review_app.selectors import deletion_requests_for, pending_count


def _badge(count: int) -> HttpResponse:
    # Empty when nothing waits: the badge hides itself (.badge:empty).
    return HttpResponse(str(count) if count else "")


@page_view
@login_required
def queue_count(request: HttpRequest) -> HttpResponse:
    """Pending proposals; nothing for a person who may not decide them."""
    return _badge(pending_count() if can_decide_reviews(request.user) else 0)


@page_view
@login_required
def deletion_count(request: HttpRequest) -> HttpResponse:
    """Open deletion requests this person may decide."""
    return _badge(deletion_requests_for(request.user).count())
