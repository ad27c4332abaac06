"""Teams and grants, for staff: which team reads or manages which system,
and whether a team's members may read or write memory at all."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import Group
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Prefetch
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from memory_app.models import GroupMemoryPolicy, System, SystemGrant
from memory_app.permissions import can_administer
from memory_app.services.principals import (
    group_memory_policy_set,
    system_grant_revoke,
    system_grant_set,
)
from review_app.forms import GrantForm, TeamPolicyForm
from review_app.methods import page_view, post_only


def _require_staff(request: HttpRequest) -> None:
    if not can_administer(request.user):
        raise PermissionDenied("Teams and grants are managed by staff.")


@page_view
@login_required
def teams(request: HttpRequest) -> HttpResponse:
    _require_staff(request)
    return _teams_page(request, GrantForm())


def _teams_page(request: HttpRequest, grant_form: GrantForm, status: int = 200) -> HttpResponse:
    """The page, also as it is drawn again around a refused grant."""
    rows = (
        Group.objects.annotate(members=Count("user", distinct=True))
        .prefetch_related(
            Prefetch(
                "system_grants",
                queryset=SystemGrant.objects.select_related("system").order_by("system__slug"),
                to_attr="grants",
            )
        )
        .order_by("name")
    )
    policies = {p.group_id: p for p in GroupMemoryPolicy.objects.all()}
    for team in rows:
        team.policy = policies.get(team.pk)
    context = {"rows": rows, "grant_form": grant_form, "active_page": "teams"}
    return render(request, "review_app/teams.html", context, status=status)


@post_only("review:teams")
@login_required
def grant_add(request: HttpRequest) -> HttpResponse:
    _require_staff(request)
    form = GrantForm(request.POST)
    if not form.is_valid():
        return _teams_page(request, form, status=400)
    data = form.cleaned_data
    # A name typed wrong would otherwise start a team of its own unnoticed.
    new_team = not Group.objects.filter(name=data["team"]).exists()
    new_system = not System.objects.filter(slug=data["system_slug"]).exists()
    system_grant_set(**data)
    said = f"Grant saved: {data['team']} may {data['level']} {data['system_slug']}."
    if new_team:
        said += f" {data['team']} is a new team, with no members yet."
    if new_system:
        said += f" {data['system_slug']} is a new system."
    messages.success(request, said)
    return redirect("review:teams")


@post_only("review:teams")
@login_required
def grant_remove(request: HttpRequest, grant_id: int) -> HttpResponse:
    _require_staff(request)
    if not system_grant_revoke(grant_id=grant_id):
        raise Http404("No such grant.")
    messages.success(request, "Grant removed.")
    return redirect("review:teams")


@post_only("review:teams")
@login_required
def team_policy(request: HttpRequest, team_id: int) -> HttpResponse:
    _require_staff(request)
    team = Group.objects.filter(pk=team_id).first()
    if team is None:
        raise Http404("No such team.")
    form = TeamPolicyForm(request.POST)
    if form.is_valid():
        group_memory_policy_set(team=team, **form.cleaned_data)
        messages.success(request, f"Memory access of {team.name} saved.")
    else:
        messages.error(request, form.error_text())
    return redirect("review:teams")
