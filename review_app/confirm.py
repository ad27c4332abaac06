"""The step between a Delete button and the deletion.

Deleting (tombstoning) posts the same form again with `confirm` set; the
first post only renders this page, naming what goes and what stays. A GET,
a stray click or a form without `confirm` deletes nothing, with or
without JavaScript.
"""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from memory_app.models import MemoryDocument
from memory_app.policy import check_can_govern
from review_app.errors import page_errors


def confirm_delete(
    request: HttpRequest,
    document: MemoryDocument,
    *,
    back_url: str,
    carry: dict[str, str],
    active_page: str,
) -> HttpResponse:
    """Ask before tombstoning `document`; `carry` are the fields the
    confirming post sends again (the action, a reason, the list page).
    Only someone who may delete it is asked (else 403, as the delete)."""
    with page_errors(request):
        check_can_govern(request.user, document)
    context = {
        "document": document,
        "action_url": request.path,
        "back_url": back_url,
        "carry": carry,
        "active_page": active_page,
    }
    return render(request, "review_app/confirm_delete.html", context)
