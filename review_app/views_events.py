"""Live events: the outbox as a page, newest first, new rows arriving by polling.

Reviewers see every event; everyone else the events they caused and those
of conversations they take part in.
"""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from memory_app.access import events_readable
from review_app.forms import EventFilterForm

PAGE_SIZE = 50


@require_GET
@login_required
def events(request: HttpRequest) -> HttpResponse:
    form = EventFilterForm(request.GET)
    filters = form.cleaned_data if form.is_valid() else {}
    rows = events_readable(request.user).select_related(
        "principal",
        "conversation",
        "document__store__owner",
        "document__store__system",
        "document__store__conversation",
    )
    if filters.get("type"):
        rows = rows.filter(type=filters["type"])
    if filters.get("after") is not None and request.htmx:
        # The poll: only what arrived since the newest row on the page. A
        # whole page loaded with `after` (a bookmark, a reload) is the page.
        new = list(rows.filter(id__gt=filters["after"]).order_by("-id")[:PAGE_SIZE])
        context = {"rows": new, "newest": new[0].pk if new else filters["after"], "form": form}
        return render(request, "review_app/events.html#poll", context)
    if filters.get("before"):
        rows = rows.filter(id__lt=filters["before"])
    page = list(rows.order_by("-id")[: PAGE_SIZE + 1])
    context = {
        "form": form,
        "rows": page[:PAGE_SIZE],
        "older": page[PAGE_SIZE - 1].pk if len(page) > PAGE_SIZE else None,
        "newest": page[0].pk if page else 0,
        "live": not filters.get("before"),
        "active_page": "events",
    }
    return render(request, "review_app/events.html", context)
