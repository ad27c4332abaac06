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

from memory_app.access import dream_jobs_readable
from memory_app.dreams.kinds import KINDS
from memory_app.dreams.runner import dream_start, dreams_busy
from memory_app.models import DreamJob, DreamReviewItem, JobStatus, ReviewAction, ReviewStatus
from memory_app.permissions import can_decide_reviews, can_review
from memory_app.selectors.review import TARGET_STORE_SELECT
from review_app.errors import require_reviewer
from review_app.forms import DreamRunForm
from review_app.methods import page_view, post_only
from review_app.pagination import Pager

PAGE_SIZE = 30
RESULTS_SHOWN = 5
UNDER_WAY = (JobStatus.QUEUED, JobStatus.RUNNING)
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
    results: list[Result]


@page_view
@login_required
def dreams(request: HttpRequest) -> HttpResponse:
    may_review = can_review(request.user)
    runs = dream_jobs_readable(request.user).select_related("requested_by")
    if may_review:
        runs = runs.annotate(proposals=Count("items")).prefetch_related(
            Prefetch("items", queryset=_shown_items(), to_attr="shown_items")
        )
    page = Pager(runs.order_by("-created_at"), PAGE_SIZE).get_page(request.GET.get("page"))
    context = {
        "page": page,
        "rows": [JobRow(job, _results(job) if may_review else []) for job in page.object_list],
        "under_way": any(job.status in UNDER_WAY for job in page.object_list),
        "kinds": sorted(KINDS),
        # Starting a run and opening the queue take a person with the review
        # right (`require_reviewer`), not a service account holding it.
        "may_decide": can_decide_reviews(request.user),
        "active_page": "dreams",
    }
    template = "review_app/dreams.html#runs" if request.htmx else "review_app/dreams.html"
    return render(request, template, context)


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
    if not form.is_valid():
        messages.error(request, form.error_text())
    elif dreams_busy(kind := form.cleaned_data["kind"]):
        messages.info(request, f"A run of {kind} is already under way.")
    else:
        dream_start(kind=kind, requested_by=request.user)
        messages.success(request, f"Started a run of {kind}; its progress shows below.")
    return redirect("review:dreams")
