"""Usage audit: what memory went into which run, and which memory earns its place.

Reviewers see every run; everyone else the runs they made or took part in.
Document figures only ever cover documents the person may read.
"""

from django.contrib.auth.decorators import login_required
from django.db.models import Count, Q
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from memory_app.access import (
    STORE_LABEL_COLUMNS,
    STORE_SELECT,
    documents_readable,
    traces_readable,
)
from memory_app.models import DocState, MemoryUsage
from review_app.forms import UsageFilterForm
from review_app.pagination import Pager

PAGE_SIZE = 50
VIEWS = ("runs", "documents", "unused")


@require_GET
@login_required
def usage(request: HttpRequest) -> HttpResponse:
    form = UsageFilterForm(request.GET)
    filters = form.cleaned_data if form.is_valid() else {}
    view = filters.get("view") or "runs"
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
        rows = (
            documents_readable(request.user)
            .filter(usages__isnull=False)
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
            .filter(state=DocState.ACTIVE, usages__isnull=True)
            .select_related(*STORE_SELECT)
            .only("id", "path", "title", "trust", "created_at", *STORE_LABEL_COLUMNS)
            .order_by("created_at", "path")
        )
    page = Pager(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    context = {"form": form, "view": view, "page": page, "active_page": "usage"}
    return render(request, "review_app/usage.html", context)


@require_GET
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
