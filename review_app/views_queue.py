"""The review queue: pending promotions, decided one by one or in bulk."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from memory_app.permissions import can_review
from memory_app.services.promote import promotion_approve, promotion_defer, promotion_reject
from review_app.display import diff_view
from review_app.errors import page_errors, require_reviewer
from review_app.forms import BulkDecisionForm, DecisionForm
from review_app.selectors import pending_count, pending_promotions, queue_rows

PAGE_SIZE = 25
_PAST = {"approve": "approved", "reject": "rejected", "defer": "deferred"}


@require_GET
@login_required
def queue(request: HttpRequest) -> HttpResponse:
    require_reviewer(request)
    page = Paginator(pending_promotions(), PAGE_SIZE).get_page(request.GET.get("page"))
    context = {
        "page": page,
        "rows": queue_rows(list(page.object_list)),
        "pending": page.paginator.count,
        "diff_view": diff_view(request),
        "active_page": "queue",
    }
    template = "review_app/queue.html#rows" if request.htmx else "review_app/queue.html"
    return render(request, template, context)


@require_GET
@login_required
def queue_count(request: HttpRequest) -> HttpResponse:
    """The live pending count (polled by htmx); empty for non-reviewers."""
    if not can_review(request.user):
        return HttpResponse("")
    return render(request, "review_app/queue.html#count", {"pending": pending_count()})


@require_POST
@login_required
def decide(request: HttpRequest, item_id) -> HttpResponse:
    require_reviewer(request)
    form = DecisionForm(request.POST)
    if not form.is_valid():
        messages.error(request, form.error_text())
        return redirect("review:queue")
    decision = form.cleaned_data
    with page_errors(request):
        _apply(request, item_id, decision)
        messages.success(request, f"Item {_PAST[decision['action']]}.")
    # htmx follows the redirect and swaps in the refreshed rows.
    return redirect("review:queue")


@require_POST
@login_required
def decide_bulk(request: HttpRequest) -> HttpResponse:
    require_reviewer(request)
    form = BulkDecisionForm(request.POST)
    if not form.is_valid():
        messages.error(request, form.error_text())
        return redirect("review:queue")
    done = 0
    for item_id in form.cleaned_data["items"]:
        with page_errors(request):
            _apply(request, item_id, form.cleaned_data)
            done += 1
    messages.success(request, f"{done} item(s) {_PAST[form.cleaned_data['action']]}.")
    return redirect("review:queue")


def _apply(request: HttpRequest, item_id, decision: dict) -> None:
    action, note = decision["action"], decision.get("note", "")
    if action == "approve":
        promotion_approve(
            user=request.user, item_id=item_id, note=note, content=decision.get("content") or None
        )
    elif action == "reject":
        promotion_reject(user=request.user, item_id=item_id, note=note)
    else:
        promotion_defer(user=request.user, item_id=item_id, note=note)
