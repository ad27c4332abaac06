"""The HTMX pages (DESIGN §6)."""

from django.contrib.auth.decorators import login_required
from django.db.models import Count, Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from memory_app.access import stores_readable
from memory_app.models import DocState, Scope
from review_app.navigation import PAGES


@require_GET
@login_required
def home(request: HttpRequest) -> HttpResponse:
    """Overview: the shared workspace stores everyone can read, and the pages."""
    stores = (
        stores_readable(request.user)
        .filter(scope=Scope.WORKSPACE)
        .annotate(active=Count("documents", filter=Q(documents__state=DocState.ACTIVE)))
        .order_by("slug")
    )
    return render(request, "review_app/home.html", {"stores": stores, "pages": PAGES})
