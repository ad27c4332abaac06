"""The review queue: proposals by status, decided one by one or in bulk.

With JavaScript a decision waits UNDO_SECONDS in the page (with an Undo
button) before it is posted; without it the forms post at once. Either way
the server decides only what it receives.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django_htmx.http import trigger_client_event

from memory_app.errors import ApplicationError, NotFound
from memory_app.services.promote import promotion_approve, promotion_defer, promotion_reject
from review_app.display import diff_view
from review_app.errors import require_reviewer
from review_app.forms import QUEUE_TABS, BulkDecisionForm, DecisionForm, QueueFilterForm
from review_app.methods import page_view, post_only
from review_app.pagination import Pager
from review_app.selectors import (
    DECIDED_TABS,
    queue_item_content,
    queue_items,
    queue_rows,
    queue_tab_counts,
)

PAGE_SIZE = 25
UNDO_SECONDS = 5
# The event a decision's response fires; the navigation badges listen for it.
QUEUE_CHANGED = "queue-changed"
_PAST = {"approve": "approved", "reject": "rejected", "defer": "deferred"}


@page_view
@login_required
def queue(request: HttpRequest) -> HttpResponse:
    require_reviewer(request, "The review queue")
    form = QueueFilterForm(request.GET)
    filters = form.filters()
    status = filters.pop("status")
    counts = queue_tab_counts(**filters)
    paginator = Pager(queue_items(status=status, **filters), PAGE_SIZE)
    # The tab counts hold this tab's size: no COUNT query of its own.
    paginator.count = counts.get(status, 0)
    page = paginator.get_page(request.GET.get("page"))
    context = {
        "form": form,
        "status": status,
        "filtered": bool(filters),
        "open_tab": status not in DECIDED_TABS,
        "tabs": [(tab, counts.get(tab, 0)) for tab in QUEUE_TABS],
        "page": page,
        "rows": queue_rows(list(page.object_list)),
        # What `{% querystring %}` gives, worked out once for every card's forms.
        "query": f"?{request.GET.urlencode()}",
        "undo_seconds": UNDO_SECONDS,
        "diff_view": diff_view(request),
        "active_page": "queue",
    }
    if request.htmx.target == "queue-tabs":
        return render(request, "review_app/queue.html#tabs", context)
    template = "review_app/queue.html#rows" if request.htmx else "review_app/queue.html"
    return render(request, template, context)


@page_view
@login_required
def proposal(request: HttpRequest, item_id) -> HttpResponse:
    """One proposal's content, rendered and as source. A queue card loads it
    with htmx when its preview is opened, so the queue page carries it for
    no card that stays closed; without JavaScript it is a page of its own."""
    require_reviewer(request)
    item = queue_item_content().filter(pk=item_id).first()
    if item is None:
        raise Http404("No such proposal.")
    context = {"item": item, "active_page": "queue"}
    template = "review_app/proposal.html#content" if request.htmx else "review_app/proposal.html"
    return render(request, template, context)


@post_only("review:queue")
@login_required
def decide(request: HttpRequest, item_id) -> HttpResponse:
    require_reviewer(request)
    return _decide(request, DecisionForm(request.POST), [item_id])


@post_only("review:queue")
@login_required
def decide_bulk(request: HttpRequest) -> HttpResponse:
    require_reviewer(request)
    form = BulkDecisionForm(request.POST)
    return _decide(request, form, None)


def _decide(request: HttpRequest, form: DecisionForm, item_ids: list | None) -> HttpResponse:
    """Apply one decision to each item; a refused form decides nothing.

    Each item is decided on its own: one that another reviewer decided
    meanwhile, or one the service refuses, is reported and the others are
    still decided, so the page always says what happened (a single item
    posted without htmx answers 404, on a page that says why). An htmx request
    gets the outcome (messages and the ids of the cards to take away) and
    fires QUEUE_CHANGED; a plain post goes back to the same tab."""
    decided: list[str] = []
    closed: list[str] = []
    refused: dict[str, str] = {}
    if not form.is_valid():
        messages.error(request, form.error_text())
    else:
        decision = form.cleaned_data
        content = _edited_content(form, single=bool(item_ids))
        for item_id in item_ids or decision["items"]:
            try:
                _apply(request, item_id, decision, content)
            except NotFound as error:
                if item_ids and not request.htmx:
                    raise Http404(error.detail) from error
                closed.append(str(item_id))
            except ApplicationError as error:
                refused[str(item_id)] = error.detail
            else:
                decided.append(str(item_id))
        for message in _refusals(refused):
            messages.error(request, message)
        if decided:
            done = "Item" if item_ids else f"{len(decided)} item(s)"
            messages.success(request, f"{done} {_PAST[decision['action']]}.")
        if closed:
            which = "This item was" if item_ids else f"{len(closed)} item(s) were"
            messages.warning(
                request, f"{which} no longer open: decided by another reviewer, or withdrawn."
            )
    if not request.htmx:
        query = request.GET.urlencode()
        return redirect(reverse("review:queue") + (f"?{query}" if query else ""))
    response = render(request, "review_app/queue.html#outcome", {"decided": decided + closed})
    if decided or closed:
        trigger_client_event(response, QUEUE_CHANGED)
    return response


def _refusals(refused: dict[str, str]) -> list[str]:
    """Each refusal, naming the item it concerns. With JavaScript it arrives
    after the undo seconds, when the reviewer is on another card, and in bulk
    several come at once: "the safety scanner refused this write" alone does
    not say which item is still open, or why."""
    if not refused:
        return []
    names = {
        str(item.pk): f"“{item.proposed_title}” ({item.target_store.label}/{item.target_path})"
        for item in queue_item_content().filter(pk__in=refused)
    }
    return [
        f"Not decided: {names.get(item_id, 'an item')}. {detail}"
        for item_id, detail in refused.items()
    ]


def _edited_content(form: DecisionForm, *, single: bool) -> str | None:
    """The content an approval applies: the card's "Edit before approving"
    box, sent with every approval from its card, as it was sent. A box
    emptied is an edit to nothing, which the approval refuses, not the
    proposal approved unedited. None (each proposal as it is) when the form
    has no such box, and for a bulk decision: one text is never applied to
    several proposals."""
    if not single or "content" not in form.data:
        return None
    return form.cleaned_data["content"]


def _apply(request: HttpRequest, item_id, decision: dict, content: str | None) -> None:
    action, note = decision["action"], decision.get("note", "")
    if action == "approve":
        promotion_approve(
            user=request.user,
            item_id=item_id,
            note=note,
            content=content,
            keep_apart=decision.get("keep_apart", ()),
        )
    elif action == "reject":
        promotion_reject(user=request.user, item_id=item_id, note=note)
    else:
        promotion_defer(user=request.user, item_id=item_id, note=note)
