"""Deletion requests: agents ask, a person who may curate the document decides."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET

from memory_app.services.delete import deletion_decide
from review_app.errors import page_errors
from review_app.forms import DeletionForm
from review_app.methods import post_only
from review_app.pagination import Pager
from review_app.selectors import deletion_requests_for

PAGE_SIZE = 50


@require_GET
@login_required
def deletions(request: HttpRequest) -> HttpResponse:
    page = Pager(deletion_requests_for(request.user), PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "review_app/deletions.html", {"page": page, "active_page": "deletions"})


@post_only("review:deletions")
@login_required
def deletion_decide_view(request: HttpRequest, item_id) -> HttpResponse:
    item = deletion_requests_for(request.user).filter(pk=item_id).first()
    if item is None:
        raise Http404("No such deletion request.")
    form = DeletionForm(request.POST)
    if not form.is_valid():
        messages.error(request, form.error_text())
        return redirect("review:deletions")
    confirm = form.cleaned_data["action"] == "confirm"
    with page_errors(request):
        deletion_decide(
            user=request.user, item=item, confirm=confirm, note=form.cleaned_data["note"]
        )
        messages.success(request, "Deleted (tombstoned)." if confirm else "Request declined.")
    return redirect("review:deletions")
