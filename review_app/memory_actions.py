"""The actions a person takes on one memory from a card or list, in one place.

Used by the system cards and My memories; each action re-checks its own
permission in the service it calls. A refused edit comes back as the list
page with that memory's edit form open and filled in (memory_forms.py), or,
when the memory was deleted or merged away meanwhile, with what was typed
shown above the list; a delete asks first (confirm.py).
"""

from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields, replace

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect

from memory_app.errors import Conflict
from memory_app.models import DocState, MemoryDocument
from memory_app.policy import check_can_curate
from memory_app.services.authoring import memory_edit
from memory_app.services.curate import document_always_inject_set, document_state_set
from review_app.confirm import confirm_delete
from review_app.errors import page_errors
from review_app.forms import MemoryActionForm, metadata_values, posted_base_version
from review_app.memory_forms import MemoryFormView, Refusal, memory_form, submit

DONE = {
    "edit": "Saved as a new version.",
    "pin": "Pinned: it now goes into every context first.",
    "unpin": "Unpinned.",
    "tombstone": "Deleted (tombstoned; its history stays).",
    "restore": "Restored.",
}

# What became of a memory that takes no edit any more, as the page says it.
GONE = {
    DocState.TOMBSTONED: "deleted",
    DocState.SUPERSEDED: "merged into another memory by a review",
}

# Renders the list page again: (editing, status[, page=]) → response, where
# editing is the refused memory's id and its form, or None, and `page` the
# list page to draw (None: the first) instead of the one posted from.
PageRenderer = Callable[..., HttpResponse]


@dataclass(frozen=True)
class EditFormView(MemoryFormView):
    """One memory's edit form and the version it edits (`base_version`,
    sent back hidden). `conflict`: refused because someone saved a newer
    version; the page shows that version beside what was typed."""

    base_version: int | None = None
    conflict: bool = False


@dataclass(frozen=True)
class KeptEdit:
    """An edit refused because its memory was deleted or merged away
    meanwhile (in another tab, by someone else, by a review). The list
    draws no edit form for such a memory, and a system card does not list
    it at all, so _memory_rows.html shows what was typed above the list,
    read-only, to copy into the restored memory or a new one."""

    document: MemoryDocument
    title: str
    content: str

    @property
    def gone(self) -> str:
        return GONE[self.document.state]


def edit_form_view(
    view: MemoryFormView, base_version: int | None, *, conflict: bool = False
) -> EditFormView:
    shown = {f.name: getattr(view, f.name) for f in fields(view)}
    return EditFormView(**shown, base_version=base_version, conflict=conflict)


def with_edit_forms(
    documents: Iterable[MemoryDocument], editing: tuple[str, MemoryFormView] | None = None
) -> None:
    """Give each listed memory its edit form: the refused one as it was typed.
    A form refused for a newer version now edits that version, the one the
    page shows it beside: saved again, it replaces it knowingly."""
    for document in documents:
        if editing and editing[0] == str(document.pk):
            refused = editing[1]
            if isinstance(refused, EditFormView) and refused.conflict:
                refused = replace(refused, base_version=document.version)
            document.edit_form = refused
        else:
            values = {"title": document.title, "content": document.content}
            values |= metadata_values(document)
            view = memory_form(str(document.pk), values, with_path=False)
            document.edit_form = edit_form_view(view, document.version)


def list_url(base: str, page_number: str | None) -> str:
    """The list page a memory's action came from, on the same page."""
    return f"{base}?page={page_number}" if page_number and page_number.isdigit() else base


def memory_action(
    request: HttpRequest,
    document: MemoryDocument,
    *,
    back_url: str,
    render_page: PageRenderer,
    active_page: str,
) -> HttpResponse:
    user = request.user
    if request.POST.get("action") == "edit":
        with page_errors(request):  # who may not edit learns that before any form error
            check_can_curate(user, document)
        refusal = submit(
            request,
            MemoryActionForm(request.POST, current=document),
            lambda title, content, metadata, base_version, **_: memory_edit(
                user=user,
                document=document,
                base_version=base_version,
                title=title,
                content=content,
                metadata=metadata,
            ),
        )
        if refusal:
            return _refused_edit(request, document, refusal, render_page)
        messages.success(request, DONE["edit"])
        return redirect(back_url)
    form = MemoryActionForm(request.POST)
    if not form.is_valid():
        messages.error(request, form.error_text())
        return redirect(back_url)
    action, data = form.cleaned_data["action"], form.cleaned_data
    if action == "tombstone" and not data["confirm"]:
        carry = {"action": action, "page": request.POST.get("page", "")}
        return confirm_delete(
            request, document, back_url=back_url, carry=carry, active_page=active_page
        )
    with page_errors(request):
        if action in ("pin", "unpin"):
            document_always_inject_set(user=user, document=document, value=action == "pin")
        else:
            # Cards ask no reason: the history records none rather than a made-up one.
            document_state_set(user=user, document=document, tombstoned=action == "tombstone")
        messages.success(request, DONE[action])
    return redirect(back_url)


def _refused_edit(
    request: HttpRequest, document: MemoryDocument, refusal: Refusal, render_page: PageRenderer
) -> HttpResponse:
    """The list page again around a refused edit. Its state is read again:
    deleted between the page's look-up and the save, the memory's row no
    longer draws the form, and what was typed would vanish with it."""
    document.refresh_from_db(fields=["state"])
    if document.state in GONE:
        # The list pages' views know nothing of it: the template reads it from the request.
        request.kept_edit = KeptEdit(
            document, refusal.values.get("title", ""), refusal.values.get("content", "")
        )
        return render_page(None, refusal.status)
    uid = str(document.pk)
    conflict = refusal.status == Conflict.status
    refused = edit_form_view(
        memory_form(uid, with_path=False, refusal=refusal),
        posted_base_version(request.POST),
        conflict=conflict,
    )
    if conflict:
        # The newer version just saved put the memory first on the first page.
        return render_page((uid, refused), refusal.status, page=None)
    return render_page((uid, refused), refusal.status)
