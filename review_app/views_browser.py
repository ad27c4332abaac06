"""The memory browser: stores, then documents by path prefix, filtered or searched."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from memory_app.policy import can_author_store
from memory_app.services.authoring import memory_author
from review_app.browser import (
    browser_documents,
    browser_folders,
    browser_listing,
    browser_search,
    browser_store,
    browser_stores,
    path_crumbs,
)
from review_app.errors import page_errors
from review_app.forms import BrowserFilterForm, MemoryForm

PAGE_SIZE = 50


@require_GET
@login_required
def browser(request: HttpRequest) -> HttpResponse:
    form = BrowserFilterForm(request.GET)
    # An invalid filter is reported and ignored; the rest still apply.
    filters = {
        name: value
        for name, value in (form.cleaned_data if form.is_valid() else _valid_part(form)).items()
        if value
    }
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
        "page": (
            None
            if query
            else Paginator(browser_listing(documents), PAGE_SIZE).get_page(request.GET.get("page"))
        ),
        "may_add": current is not None and can_author_store(request.user, current),
        "add_form": MemoryForm(),
        "active_page": "browser",
    }
    template = "review_app/browser.html#results" if request.htmx else "review_app/browser.html"
    return render(request, template, context)


def _valid_part(form: BrowserFilterForm) -> dict:
    return {name: value for name, value in form.cleaned_data.items() if name not in form.errors}


@require_POST
@login_required
def browser_add(request: HttpRequest, store_id: int) -> HttpResponse:
    """A reviewer adds reviewed memory to a workspace store (a manager to
    their system's, anyone to their own): the same service as the cards."""
    store = browser_store(request.user, store_id)
    form = MemoryForm(request.POST)
    back = f"{reverse('review:browser')}?store={store.pk}"
    if not form.is_valid():
        messages.error(request, form.error_text())
        return redirect(back)
    with page_errors(request):
        memory_author(user=request.user, store=store, **form.author_kwargs())
        messages.success(request, "Memory added.")
    return redirect(back)
