"""Systems: the ones a person may read, and each one's memory card.

A system the person cannot read answers 404 everywhere: the card, its
fragments and its actions. Readers see no manage actions; managers (a
manage grant through a team) add, edit, pin and delete.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Count, Exists, OuterRef
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse

from memory_app.access import documents_readable, live_q, systems_manageable, systems_readable
from memory_app.models import System
from memory_app.permissions import has_memory_permission
from memory_app.policy import can_curate_store, curates_every_store
from memory_app.services.stores import store_for_system
from review_app.memory_actions import list_url, memory_action, with_edit_forms
from review_app.memory_forms import MemoryFormView, add_memory, memory_form
from review_app.methods import page_view, post_only
from review_app.pagination import Pager

PAGE_SIZE = 50


def _system(request: HttpRequest, slug: str) -> System:
    system = systems_readable(request.user).select_related("store").filter(slug=slug).first()
    if system is None:
        raise Http404("No such system.")
    if not hasattr(system, "store"):
        # Made without one (the admin before it made stores): created on
        # first use, as a grant creates it, and as a user's store is.
        system.store = store_for_system(system=system)
    return system


@page_view
@login_required
def systems(request: HttpRequest) -> HttpResponse:
    rows = (
        systems_readable(request.user)
        .annotate(
            # What each card lists under "What agents … are told".
            memories=Count("store__documents", filter=live_q("store__documents__")),
            managed=Exists(systems_manageable(request.user).filter(pk=OuterRef("pk"))),
        )
        .order_by("slug")
    )
    context = {
        "rows": rows,
        # Switched off, "read memory" hides every system: say so, not "no grant".
        "readable": has_memory_permission(request.user, "read_memory"),
        # A reviewer's card offers manage actions on every system: the list says so.
        "manages_all": curates_every_store(request.user),
        "active_page": "systems",
    }
    return render(request, "review_app/systems.html", context)


@page_view
@login_required
def system_card(request: HttpRequest, slug: str) -> HttpResponse:
    return _card_page(request, _system(request, slug), request.GET.get("page"))


def _card_page(
    request: HttpRequest,
    system: System,
    page_number,
    *,
    add_form: MemoryFormView | None = None,
    editing: tuple[str, MemoryFormView] | None = None,
    status: int = 200,
) -> HttpResponse:
    """The card, also as it is drawn again around a refused save: what
    agents are told, the live memory (deleted and expired ones are in the
    browser)."""
    memories = (
        documents_readable(request.user)
        .filter(live_q(), store=system.store)
        .defer("embedding", "search_vector")
        .order_by("-updated_at", "path")
    )
    page = Pager(memories, PAGE_SIZE).get_page(page_number)
    may_manage = can_curate_store(request.user, system.store)
    if may_manage:
        with_edit_forms(page.object_list, editing)
    context = {
        "system": system,
        "page": page,
        "may_manage": may_manage,
        "add_form": add_form or memory_form(with_path=True),
        "active_page": "systems",
    }
    template = "review_app/system.html#memories" if request.htmx else "review_app/system.html"
    return render(request, template, context, status=status)


@post_only(lambda slug, **_: reverse("review:system", args=[slug]))
@login_required
def system_memory_add(request: HttpRequest, slug: str) -> HttpResponse:
    system = _system(request, slug)
    refused = add_memory(request, system.store)
    if refused:
        add_form, status = refused
        return _card_page(request, system, 1, add_form=add_form, status=status)
    messages.success(request, "Memory added.")
    return redirect("review:system", slug=slug)


@post_only(lambda slug, **_: reverse("review:system", args=[slug]))
@login_required
def system_memory_act(request: HttpRequest, slug: str, document_id) -> HttpResponse:
    system = _system(request, slug)
    document = (
        documents_readable(request.user)
        .select_related("store__system")
        .filter(store=system.store, pk=document_id)
        .first()
    )
    if document is None:
        raise Http404("No such memory on this card.")
    page_number = request.POST.get("page")
    return memory_action(
        request,
        document,
        back_url=list_url(reverse("review:system", args=[slug]), page_number),
        render_page=lambda editing, status, page=page_number: _card_page(
            request, system, page, editing=editing, status=status
        ),
        active_page="systems",
    )
