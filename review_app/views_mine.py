"""My memories: the person's own store — what they wrote and what agents
saved on their behalf, with where it came from."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import OuterRef, Subquery
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse

from memory_app.access import documents_readable
from memory_app.models import DocState, MemoryVersion, Scope
from memory_app.permissions import has_memory_permission
from memory_app.policy import can_curate_store
from memory_app.services.stores import store_for_user
from review_app.memory_actions import list_url, memory_action, with_edit_forms
from review_app.memory_forms import MemoryFormView, add_memory, memory_form
from review_app.methods import page_view, post_only
from review_app.pagination import Pager

PAGE_SIZE = 50


def my_memories(user):
    """The user's documents, each with who first saved it and in which run."""
    first = MemoryVersion.objects.filter(document=OuterRef("pk"), version=1)
    return (
        documents_readable(user)
        .filter(store__scope=Scope.USER, store__owner=user)
        .exclude(state=DocState.SUPERSEDED)
        .annotate(
            saved_by=Subquery(first.values("author_name")[:1]),
            saved_in_run=Subquery(first.values("run_id")[:1]),
        )
        .defer("embedding", "search_vector")
        .order_by("-updated_at", "path")
    )


@page_view
@login_required
def mine(request: HttpRequest) -> HttpResponse:
    return _mine_page(request, request.GET.get("page"))


def _mine_page(
    request: HttpRequest,
    page_number,
    *,
    add_form: MemoryFormView | None = None,
    editing: tuple[str, MemoryFormView] | None = None,
    status: int = 200,
) -> HttpResponse:
    """The page, also as it is drawn again around a refused save."""
    readable = has_memory_permission(request.user, "read_memory")
    page = Pager(my_memories(request.user), PAGE_SIZE).get_page(page_number)
    for document in page.object_list:
        if document.saved_by == request.user.get_username():
            document.saved_by = ""  # their own writes need no attribution
    may_manage = readable and can_curate_store(request.user, store_for_user(user=request.user))
    if may_manage:
        with_edit_forms(page.object_list, editing)
    context = {
        "page": page,
        "may_manage": may_manage,
        "readable": readable,
        "add_form": add_form or memory_form(with_path=True),
        "active_page": "mine",
    }
    template = "review_app/mine.html#memories" if request.htmx else "review_app/mine.html"
    return render(request, template, context, status=status)


@post_only("review:mine")
@login_required
def mine_add(request: HttpRequest) -> HttpResponse:
    store = store_for_user(user=request.user)
    refused = add_memory(request, store)
    if refused:
        add_form, status = refused
        return _mine_page(request, 1, add_form=add_form, status=status)
    messages.success(request, "Saved to your memory.")
    return redirect("review:mine")


@post_only("review:mine")
@login_required
def mine_act(request: HttpRequest, document_id) -> HttpResponse:
    document = my_memories(request.user).select_related("store").filter(pk=document_id).first()
    if document is None:
        raise Http404("No such memory of yours.")
    page_number = request.POST.get("page")
    return memory_action(
        request,
        document,
        back_url=list_url(reverse("review:mine"), page_number),
        render_page=lambda editing, status, page=page_number: _mine_page(
            request, page, editing=editing, status=status
        ),
        active_page="mine",
    )
