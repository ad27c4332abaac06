"""The Dream jobs page: recent runs with live progress, and "run now" for reviewers.

Reviewers also see the jobs agents' promotion and deletion requests start,
and each job's proposals with a link to where they are decided or what
they became.
"""

from dataclasses import dataclass

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Count, Prefetch
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse

from memory_app.access import dream_jobs_readable, stores_readable
from memory_app.dreams.kinds import KINDS
from memory_app.dreams.runner import UNDER_WAY, dream_stale, dream_start_unless_busy, stats_summary
from memory_app.models import (
    DreamJob,
    DreamKind,
    DreamReviewItem,
    ReviewAction,
    ReviewStatus,
)
from memory_app.permissions import can_decide_reviews, can_review, has_memory_permission
from memory_app.selectors.review import TARGET_STORE_SELECT
from review_app.errors import require_reviewer
from review_app.forms import DreamRunForm
from review_app.methods import page_view, post_only
from review_app.pagination import Pager

PAGE_SIZE = 30
RESULTS_SHOWN = 5
OPEN = (ReviewStatus.PENDING, ReviewStatus.DEFERRED)


@dataclass(frozen=True)
class Result:
    """One proposal of a job, and where a reviewer follows it."""

    text: str
    status: str
    url: str


@dataclass(frozen=True)
class JobRow:
    job: DreamJob
    stats: dict
    results: list[Result]


@page_view
@login_required
def dreams(request: HttpRequest) -> HttpResponse:
    # What a run proposed names stores and paths: reviewers who may read memory.
    may_review = can_review(request.user) and has_memory_permission(request.user, "read_memory")
    runs = dream_jobs_readable(request.user).select_related("requested_by")
    if may_review:
        runs = runs.annotate(proposals=Count("items")).prefetch_related(
            Prefetch("items", queryset=_shown_items(), to_attr="shown_items")
        )
    page = Pager(runs.order_by("-created_at"), PAGE_SIZE).get_page(request.GET.get("page"))
    readable = _readable_slugs(request.user, page.object_list)
    context = {
        "page": page,
        "rows": [
            JobRow(job, _shown_stats(job, readable), _results(job) if may_review else [])
            for job in page.object_list
        ],
        # A run lost with its worker is not waited for (the requeue retries or fails it).
        "under_way": any(
            job.status in UNDER_WAY and not dream_stale(job) for job in page.object_list
        ),
        "kinds": sorted(KINDS),
        # Starting a run and opening the queue take a person with the review
        # right (`require_reviewer`), not a service account holding it.
        "may_decide": can_decide_reviews(request.user),
        "active_page": "dreams",
    }
    template = "review_app/dreams.html#runs" if request.htmx else "review_app/dreams.html"
    return render(request, template, context)


def _readable_slugs(user, jobs) -> set[str]:
    """The stores the canary runs on the page name that this viewer may read."""
    named = {slug for job in jobs if job.kind == DreamKind.CANARY for slug in _canary_stores(job)}
    if not named:
        return set()
    return set(stores_readable(user).filter(slug__in=named).values_list("slug", flat=True))


def _canary_stores(job: DreamJob) -> set[str]:
    stats = job.stats or {}
    return set(stats.get("results", {})) | {d.get("store") for d in stats.get("drift", [])}


def _shown_stats(job: DreamJob, readable: set[str]) -> dict:
    """A run's figures as this viewer may see them.

    The canary names the stores it ran on: only those the viewer may read
    are named or counted, so the page does not tell of a system the viewer
    has no grant on.
    """
    stats = stats_summary(job.stats or {})
    if job.kind == DreamKind.CANARY:
        stats["stores"] = len(set(job.stats.get("results", {})) & readable)
        stats["drift"] = [d for d in stats.get("drift", []) if d.get("store") in readable]
    return stats


def _shown_items():
    """A job's first proposals, without their (possibly long) texts."""
    return (
        DreamReviewItem.objects.select_related(*TARGET_STORE_SELECT, "result_version")
        .defer("proposed_content", "rationale", "findings", "result_version__content")
        .order_by("created_at", "id")[:RESULTS_SHOWN]
    )


def _results(job: DreamJob) -> list[Result]:
    return [_result(item) for item in job.shown_items]


def _result(item: DreamReviewItem) -> Result:
    where = f"{item.target_store.label}/{item.target_path}" if item.target_store else ""
    text = f"{item.action} {where}".strip()
    if item.status == ReviewStatus.APPROVED and item.result_version_id:
        url = reverse("review:document", args=[item.result_version.document_id])
    elif item.status in OPEN and item.action == ReviewAction.TOMBSTONE:
        url = reverse("review:deletions")
    elif item.status in OPEN:
        # The tab it is on: a deferred proposal is not on the pending one.
        url = f"{reverse('review:queue')}?status={item.status}#item-{item.pk}"
    elif item.source_document_id:
        url = reverse("review:document", args=[item.source_document_id])
    else:
        url = ""
    return Result(text, item.status, url)


@post_only("review:dreams")
@login_required
def dream_run(request: HttpRequest) -> HttpResponse:
    require_reviewer(request, "Running dream jobs")
    form = DreamRunForm(request.POST)
    kind = form.cleaned_data["kind"] if form.is_valid() else None
    if kind is None:
        messages.error(request, form.error_text())
    elif dream_start_unless_busy(kind=kind, requested_by=request.user):
        messages.success(request, f"Started a run of {kind}; its progress shows below.")
    else:
        messages.info(request, f"A run of {kind} is already under way.")
    return redirect("review:dreams")
