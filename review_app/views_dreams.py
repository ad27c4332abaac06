"""The Dream jobs page: recent runs with live progress, and "run now" for reviewers."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from memory_app.dreams.kinds import KINDS
from memory_app.dreams.runner import dream_start, dreams_busy
from memory_app.models import DreamJob, JobStatus
from memory_app.permissions import can_review
from review_app.errors import require_reviewer
from review_app.forms import DreamRunForm

PAGE_SIZE = 30
UNDER_WAY = (JobStatus.QUEUED, JobStatus.RUNNING)


@require_GET
@login_required
def dreams(request: HttpRequest) -> HttpResponse:
    runs = DreamJob.objects.filter(kind__in=list(KINDS)).select_related("requested_by")
    page = Paginator(runs.order_by("-created_at"), PAGE_SIZE).get_page(request.GET.get("page"))
    context = {
        "page": page,
        "under_way": any(job.status in UNDER_WAY for job in page.object_list),
        "kinds": sorted(KINDS),
        "may_run": can_review(request.user),
        "active_page": "dreams",
    }
    template = "review_app/dreams.html#runs" if request.htmx else "review_app/dreams.html"
    return render(request, template, context)


@require_POST
@login_required
def dream_run(request: HttpRequest) -> HttpResponse:
    require_reviewer(request)
    form = DreamRunForm(request.POST)
    if not form.is_valid():
        messages.error(request, form.error_text())
    elif dreams_busy(kind := form.cleaned_data["kind"]):
        messages.info(request, f"A {kind} run is already under way.")
    else:
        dream_start(kind=kind, requested_by=request.user)
        messages.success(request, f"Started a {kind} run; its progress shows below.")
    return redirect("review:dreams")
