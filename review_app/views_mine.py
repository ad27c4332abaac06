"""My memories: the person's own store — what they wrote and what agents
saved on their behalf, with where it came from."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import OuterRef, Subquery
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from memory_app.access import documents_readable
from memory_app.models import DocState, MemoryVersion, Scope
from memory_app.permissions import has_memory_permission
from memory_app.policy import can_curate_store
from memory_app.services.authoring import memory_author
from memory_app.services.stores import store_for_user
from review_app.errors import page_errors
from review_app.forms import MemoryForm
from review_app.memory_actions import memory_action

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


@require_GET
@login_required
def mine(request: HttpRequest) -> HttpResponse:
    readable = has_memory_permission(request.user, "read_memory")
    page = Paginator(my_memories(request.user), PAGE_SIZE).get_page(request.GET.get("page"))
    for document in page.object_list:
        if document.saved_by == request.user.get_username():
            document.saved_by = ""  # their own writes need no attribution
    context = {
        "page": page,
        "may_manage": readable
        and can_curate_store(request.user, store_for_user(user=request.user)),
        "readable": readable,
        "form": MemoryForm(),
        "active_page": "mine",
    }
    template = "review_app/mine.html#memories" if request.htmx else "review_app/mine.html"
    return render(request, template, context)


@require_POST
@login_required
def mine_add(request: HttpRequest) -> HttpResponse:
    form = MemoryForm(request.POST)
    if not form.is_valid():
        messages.error(request, form.error_text())
        return redirect("review:mine")
    with page_errors(request):
        memory_author(
            user=request.user, store=store_for_user(user=request.user), **form.author_kwargs()
        )
        messages.success(request, "Saved to your memory.")
    return redirect("review:mine")


@require_POST
@login_required
def mine_act(request: HttpRequest, document_id) -> HttpResponse:
    document = my_memories(request.user).select_related("store").filter(pk=document_id).first()
    if document is None:
        raise Http404("No such memory of yours.")
    memory_action(request, document)
    return redirect("review:mine")
