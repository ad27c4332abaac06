"""Deletion requests: agents ask, a person who may curate the document decides."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from memory_app.errors import InvalidInput, NotFound, WriteBlocked
from memory_app.services.delete import deletion_decide
from review_app.errors import page_errors, refusal_under
from review_app.forms import DeletionForm
from review_app.memory_forms import text_without_credentials
from review_app.methods import page_view, post_only
from review_app.pagination import Pager
from review_app.selectors import deletion_requests_for

PAGE_SIZE = 50


@page_view
@login_required
def deletions(request: HttpRequest) -> HttpResponse:
    return _deletions_page(request, request.GET.get("page"))


def _deletions_page(
    request: HttpRequest,
    page_number,
    *,
    refused: tuple[str, str, str] | None = None,
    status: int = 400,
) -> HttpResponse:
    """The page, also as it is drawn again around a refused decision:
    `refused` is that request's id, the note as typed and the error, and
    `status` the refusal's (400 for the form, the service's own for a note
    it refused)."""
    page = Pager(deletion_requests_for(request.user), PAGE_SIZE).get_page(page_number)
    if refused:
        item_id, note, error = refused
        for item in page.object_list:
            if str(item.pk) == item_id:
                item.typed_note, item.note_error = note, error
    context = {"page": page, "active_page": "deletions"}
    return render(request, "review_app/deletions.html", context, status=status if refused else 200)


@post_only("review:deletions")
@login_required
def deletion_decide_view(request: HttpRequest, item_id) -> HttpResponse:
    item = deletion_requests_for(request.user).filter(pk=item_id).first()
    if item is None:
        if deletion_requests_for(request.user, open_only=False).filter(pk=item_id).exists():
            return _no_longer_open(request)
        raise Http404("No such deletion request.")
    form = DeletionForm(request.POST)
    if not form.is_valid():
        # Drawn again with the note as typed (a credential taken out): forms never lose work.
        note = text_without_credentials(form.data.get("note", ""))
        refused = (str(item.pk), note, form.error_text())
        return _deletions_page(request, request.POST.get("page"), refused=refused)
    confirm, note = form.cleaned_data["action"] == "confirm", form.cleaned_data["note"]
    with page_errors(request):
        try:
            deletion_decide(user=request.user, item=item, confirm=confirm, note=note)
        except NotFound:  # decided between the look-up and the decision
            return _no_longer_open(request)
        except (WriteBlocked, InvalidInput) as error:
            # Drawn again with the note as typed (a credential taken out), as above.
            refused = (
                str(item.pk),
                text_without_credentials(note),
                refusal_under(request, error, "note"),
            )
            return _deletions_page(
                request, request.POST.get("page"), refused=refused, status=error.status
            )
        messages.success(request, "Deleted (tombstoned)." if confirm else "Request declined.")
    return redirect("review:deletions")


def _no_longer_open(request: HttpRequest) -> HttpResponse:
    """A request decided meanwhile (another tab, another person): said as
    the queue says it, not as a 404."""
    messages.warning(
        request, "This request is no longer open: decided by someone else, or withdrawn."
    )
    return redirect("review:deletions")
