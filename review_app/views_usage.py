"""Usage audit: what memory went into which run, and which memory earns its place.

Reviewers see every run, everyone else their own (`access.traces_readable`);
nothing without "read memory".
Document figures only ever cover documents the person may read.
"""

from datetime import timedelta

from django.contrib.auth.decorators import login_required
from django.db.models import Count, Q
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from memory_app.access import (
    STORE_LABEL_COLUMNS,
    STORE_SELECT,
    documents_readable,
    traces_readable,
    unexpired_q,
)
from memory_app.models import DocState, MemoryUsage
from review_app.forms import UsageFilterForm, valid_part
from review_app.inbox import HIT_RATE_DAYS, injected_hit_rate
from review_app.methods import page_view
from review_app.pagination import Pager

PAGE_SIZE = 50
VIEWS = ("runs", "documents", "unused")


@page_view
@login_required
def usage(request: HttpRequest) -> HttpResponse:
    form = UsageFilterForm(request.GET)
    # An invalid filter is reported and dropped alone: the others (the tab
    # above all) still apply.
    filters = valid_part(form)
    view = filters.get("view") or "runs"
    days = filters.get("days")
    if view == "runs":
        rows = traces_readable(request.user).select_related("principal", "conversation")
        if filters.get("run"):
            rows = rows.filter(run_id=filters["run"])
        if filters.get("conversation"):
            rows = rows.filter(conversation__external_id=filters["conversation"])
        rows = rows.annotate(
            injected=Count("usages", distinct=True),
            hits=Count("usages", filter=Q(usages__hit=True), distinct=True),
        ).order_by("-created_at", "-id")
    elif view == "documents":
        # Filtered first, the counts below join only the injections kept.
        injected = (
            Q(usages__created_at__gte=timezone.now() - timedelta(days=days))
            if days
            else Q(usages__isnull=False)
        )
        rows = (
            documents_readable(request.user)
            .filter(injected)
            .annotate(
                injections=Count("usages"),
                hits=Count("usages", filter=Q(usages__hit=True)),
            )
            .select_related(*STORE_SELECT)
            .only("id", "path", "title", "trust", *STORE_LABEL_COLUMNS)
            .order_by("-injections", "path")
        )
    else:
        rows = (
            documents_readable(request.user)
            .filter(unexpired_q(), state=DocState.ACTIVE, usages__isnull=True)
            .select_related(*STORE_SELECT)
            .only("id", "path", "title", "trust", "created_at", *STORE_LABEL_COLUMNS)
            .order_by("created_at", "path")
        )
    page = Pager(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    context = {
        "form": form,
        "view": view,
        "days": days,
        # The inbox's figure over the same days, so that its link lands on it.
        "hit_rate": injected_hit_rate(request.user, days) if view == "documents" and days else None,
        "hit_rate_days": HIT_RATE_DAYS,
        "page": page,
        "active_page": "usage",
    }
    return render(request, "review_app/usage.html", context)


@page_view
@login_required
def trace_detail(request: HttpRequest, trace_id: int) -> HttpResponse:
    trace = (
        traces_readable(request.user)
        .select_related("principal", "conversation")
        .filter(pk=trace_id)
        .first()
    )
    if trace is None:
        raise Http404("No such retrieval trace.")
    hits = set(
        MemoryUsage.objects.filter(trace=trace, hit=True).values_list("document_id", flat=True)
    )
    rows = [{**row, "hit": row.get("id") in {str(h) for h in hits}} for row in trace.candidates]
    context = {"trace": trace, "rows": rows, "active_page": "usage"}
    return render(request, "review_app/trace.html", context)
