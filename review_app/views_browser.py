"""The memory browser: stores, then documents by path prefix, filtered or searched."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse

from memory_app.models import Scope
from memory_app.policy import can_author_store
from review_app.browser import (
    browser_documents,
    browser_folders,
    browser_page,
    browser_search,
    browser_store,
    browser_stores,
    path_crumbs,
)
from review_app.forms import BrowserFilterForm, valid_part
from review_app.memory_forms import MemoryFormView, add_memory, memory_form
from review_app.methods import page_view, post_only


@page_view
@login_required
def browser(request: HttpRequest) -> HttpResponse:
    return _browser_page(request, request.GET)


def _browser_page(
    request: HttpRequest, params, *, add_form: MemoryFormView | None = None, status: int = 200
) -> HttpResponse:
    """The browser, also as it is drawn again around a refused add."""
    form = BrowserFilterForm(params)
    # An invalid filter is reported and ignored; the rest still apply.
    filters = {name: value for name, value in valid_part(form).items() if value}
    current = browser_store(request.user, filters["store"]) if "store" in filters else None
    documents = browser_documents(request.user, filters)
    prefix = filters.get("prefix", "")
    query = filters.get("q", "")
    context = {
        "form": form,
        "filters": filters,
        "stores": browser_stores(request.user, filters.get("scope", "")),
        "current": current,
        "crumbs": path_crumbs(prefix),
        "folders": (
            browser_folders(documents, prefix)
            if current and (not prefix or prefix.endswith("/"))
            else []
        ),
        "query": query,
        "hits": browser_search(request.user, documents, query) if query else None,
        "page": None if query else browser_page(documents, params.get("page")),
        "may_add": current is not None and can_author_store(request.user, current),
        # A user store holds preferences only (memory_author): no type to choose.
        "add_with_type": current is not None and current.scope != Scope.USER,
        "add_form": add_form or memory_form(with_path=True),
        "active_page": "browser",
    }
    template = "review_app/browser.html#results" if request.htmx else "review_app/browser.html"
    return render(request, template, context, status=status)


@post_only(lambda store_id: f"{reverse('review:browser')}?store={store_id}")
@login_required
def browser_add(request: HttpRequest, store_id: int) -> HttpResponse:
    """A reviewer adds reviewed memory to a workspace store (a manager to
    their system's, anyone to their own): the same service as the cards."""
    store = browser_store(request.user, store_id)
    refused = add_memory(request, store)
    if refused:
        add_form, status = refused
        return _browser_page(request, {"store": store.pk}, add_form=add_form, status=status)
    messages.success(request, "Memory added.")
    return redirect(f"{reverse('review:browser')}?store={store.pk}")
