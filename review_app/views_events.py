"""Live events: the outbox as a page, newest first, new rows arriving by polling.

Reviewers see every event; everyone else the events they caused and, in
conversations they take part in, others' events about the documents of a
store they read there (`access.events_readable`); nothing without "read
memory". A document an event names is shown by
its title and store only to those who may open it now
(`access.event_documents_readable`).
"""

from django.contrib.auth.decorators import login_required
from django.db.models import Max
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from memory_app.access import event_documents_readable, events_readable
from memory_app.models import MemoryEvent
from review_app.forms import EventFilterForm, valid_part
from review_app.methods import page_view

PAGE_SIZE = 50


@page_view
@login_required
def events(request: HttpRequest) -> HttpResponse:
    form = EventFilterForm(request.GET)
    # An invalid filter is reported and dropped alone: the poll of a page
    # with `type=bogus` is still the poll, not the whole page in the table.
    filters = valid_part(form)
    rows = events_readable(request.user).select_related("principal", "conversation")
    if filters.get("type"):
        rows = rows.filter(type=filters["type"])
    if "after" in request.GET and request.htmx:
        # The poll: only what arrived since the newest row on the page. A
        # whole page loaded with `after` (a bookmark, a reload) is the page.
        after = filters.get("after")
        if after is None:  # unreadable: the poll goes on from the newest event
            after = rows.aggregate(newest=Max("id"))["newest"] or 0
        new = _with_documents(request, list(rows.filter(id__gt=after).order_by("-id")[:PAGE_SIZE]))
        context = {
            "rows": new,
            "newest": new[0].pk if new else after,
            "event_type": filters.get("type", ""),
        }
        return render(request, "review_app/events.html#poll", context)
    if filters.get("before"):
        rows = rows.filter(id__lt=filters["before"])
    page = _with_documents(request, list(rows.order_by("-id")[: PAGE_SIZE + 1]))
    context = {
        "form": form,
        "event_type": filters.get("type", ""),
        "rows": page[:PAGE_SIZE],
        "older": page[PAGE_SIZE - 1].pk if len(page) > PAGE_SIZE else None,
        "newest": page[0].pk if page else 0,
        "live": not filters.get("before"),
        "active_page": "events",
    }
    return render(request, "review_app/events.html", context)


def _with_documents(request: HttpRequest, rows: list[MemoryEvent]) -> list[MemoryEvent]:
    """Sets each event's `readable_document`: the document it names, if the
    viewer may open it now, else None."""
    documents = event_documents_readable(request.user, rows)
    for event in rows:
        event.readable_document = documents.get(event.document_id)
    return rows
