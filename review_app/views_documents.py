"""The document page: content, history, diffs between versions, curation."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from memory_app.access import access_document, store_ref
from memory_app.actors import actor_for
from memory_app.errors import NotFound
from memory_app.models import DocState
from memory_app.policy import can_curate, can_govern, can_redact
from memory_app.selectors.chain import version_chain_verify
from memory_app.services.curate import (
    document_always_inject_set,
    document_rollback,
    document_state_set,
)
from memory_app.services.redact import document_redact
from review_app.confirm import confirm_delete
from review_app.diffs import side_by_side
from review_app.errors import page_errors
from review_app.forms import CurateForm, RedactForm

HISTORY_LIMIT = 200


def _document(request: HttpRequest, document_id):
    with page_errors(request):
        return access_document(actor_for(request.user), id=document_id)


@require_GET
@login_required
def document_page(request: HttpRequest, document_id) -> HttpResponse:
    document = _document(request, document_id)
    versions = list(document.versions.select_related("author").order_by("-version")[:HISTORY_LIMIT])
    by_number = {v.version: v for v in versions}
    new = _version_param(request, "new", by_number, default=document.version)
    old = _version_param(request, "old", by_number, default=max(new.version - 1, 1))
    context = {
        "document": document,
        "ref": f"{store_ref(document.store, actor_for(request.user))}/{document.path}",
        "versions": versions,
        "old": old,
        "new": new,
        "diff": side_by_side(old.content, new.content),
        "chain": version_chain_verify(document),
        "may_roll_back": can_curate(request.user, document),
        "may_govern": can_govern(request.user, document),
        "may_redact": can_redact(request.user, document),
        "tombstoned": document.state == DocState.TOMBSTONED,
        "active_page": "browser",
    }
    template = "review_app/document.html#diff" if request.htmx else "review_app/document.html"
    return render(request, template, context)


def _version_param(request, name, by_number, default):
    raw = request.GET.get(name)
    try:
        number = int(raw) if raw else default
    except ValueError:
        number = default
    version = by_number.get(number) or by_number.get(default)
    if version is None:
        raise NotFound("No such version.")
    return version


@require_POST
@login_required
def document_curate(request: HttpRequest, document_id) -> HttpResponse:
    """Rollback, pin/unpin, tombstone/restore: one form, one action each;
    tombstoning asks first."""
    document = _document(request, document_id)
    form = CurateForm(request.POST)
    if not form.is_valid():
        messages.error(request, form.error_text())
        return redirect("review:document", document_id=document.pk)
    data = form.cleaned_data
    action, reason = data["action"], data.get("reason", "")
    if action == "tombstone" and not data["confirm"]:
        return confirm_delete(
            request,
            document,
            back_url=reverse("review:document", args=[document.pk]),
            carry={"action": action, "reason": reason},
            active_page="browser",
        )
    with page_errors(request):
        if action == "rollback":
            document_rollback(
                user=request.user, document=document, version=data["version"], reason=reason
            )
        elif action in ("pin", "unpin"):
            document_always_inject_set(user=request.user, document=document, value=action == "pin")
        else:
            document_state_set(
                user=request.user,
                document=document,
                tombstoned=action == "tombstone",
                reason=reason,
            )
        messages.success(request, f"Done: {action}.")
    return redirect("review:document", document_id=document.pk)


@require_POST
@login_required
def document_redact_page(request: HttpRequest, document_id) -> HttpResponse:
    """Remove a text from the whole history; the message says where, never what."""
    document = _document(request, document_id)
    form = RedactForm(request.POST)
    if not form.is_valid():
        messages.error(request, form.error_text())
        return redirect("review:document", document_id=document.pk)
    with page_errors(request):
        result = document_redact(
            user=request.user, document=document, text=form.cleaned_data["text"]
        )
        messages.success(
            request,
            f"Redacted {result.occurrences} occurrence(s) in version(s) "
            f"{', '.join(map(str, result.versions))}.",
        )
    return redirect("review:document", document_id=document.pk)
