"""The HTMX pages (DESIGN §6)."""

from django.contrib.auth.decorators import login_required
from django.db.models import Count, Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from memory_app.access import stores_readable, unexpired_q
from memory_app.models import DocState, Scope
from review_app.inbox import (
    HIT_RATE_DAYS,
    injected_hit_rate,
    recent_decisions,
    scanner_blocks_today,
    waiting_for,
)
from review_app.methods import page_view


@page_view
@login_required
def home(request: HttpRequest) -> HttpResponse:
    """The inbox: what waits for the person, their recent decisions, how
    memory fares, and the shared workspace stores."""
    user = request.user
    stores = (
        stores_readable(user)
        .filter(scope=Scope.WORKSPACE)
        .annotate(
            active=Count(
                "documents",
                filter=Q(documents__state=DocState.ACTIVE) & unexpired_q("documents__"),
            )
        )
        .order_by("slug")
    )
    context = {
        "waiting": waiting_for(user),
        "decisions": recent_decisions(user),
        "blocks_today": scanner_blocks_today(user),
        "hit_rate": injected_hit_rate(user),
        "hit_rate_days": HIT_RATE_DAYS,
        "stores": stores,
    }
    return render(request, "review_app/home.html", context)
