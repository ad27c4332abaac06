"""The actions a person takes on one memory from a card or list, in one place.

Used by the system cards and My memories; each action re-checks its own
permission in the service it calls.
"""

from django.contrib import messages
from django.http import HttpRequest

from memory_app.models import MemoryDocument
from memory_app.services.authoring import memory_edit
from memory_app.services.curate import document_always_inject_set, document_state_set
from review_app.errors import page_errors
from review_app.forms import MemoryActionForm

DONE = {
    "edit": "Saved as a new version.",
    "pin": "Pinned: it now goes into every context first.",
    "unpin": "Unpinned.",
    "tombstone": "Deleted (tombstoned; its history stays).",
    "restore": "Restored.",
}


def memory_action(request: HttpRequest, document: MemoryDocument) -> None:
    form = MemoryActionForm(request.POST)
    if not form.is_valid():
        messages.error(request, form.error_text())
        return
    action, user = form.cleaned_data["action"], request.user
    with page_errors(request):
        if action == "edit":
            memory_edit(
                user=user,
                document=document,
                title=form.cleaned_data["title"],
                content=form.cleaned_data["content"],
                metadata=form.cleaned_data["metadata"],
            )
        elif action in ("pin", "unpin"):
            document_always_inject_set(user=user, document=document, value=action == "pin")
        else:
            document_state_set(
                user=user, document=document, tombstoned=action == "tombstone", reason="page"
            )
        messages.success(request, DONE[action])
