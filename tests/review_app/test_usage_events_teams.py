"""Usage audit, live events and teams: what each person sees, from the outside."""

import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth.models import Group
from django.utils import timezone

from memory_app.actors import Actor
from memory_app.models import ContextTrace, GroupMemoryPolicy, MemoryEvent, SystemGrant
from memory_app.services.context import memory_context_load, memory_mark_used
from memory_app.services.conversations import conversation_open
from memory_app.services.events import EVENT_TYPES
from memory_app.services.principals import system_grant_set
from tests.factories import UserFactory, WorkspaceStoreFactory, make_document

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def run(owner):
    """One agent turn of the owner's: a context loaded, one document marked used."""
    store = WorkspaceStoreFactory(slug="ops")
    used = make_document(store, "runbooks/lag", "Kafka consumer lag: scale the consumer group.")
    make_document(store, "runbooks/dns", "DNS timeouts: use the node-local cache.")
    make_document(store, "runbooks/cold", "Cold cache 5xx: warm the cache before deploys.")
    conversation = conversation_open(user=owner, external_id="audit-1")
    actor = Actor(user=owner, agent=owner, conversation=conversation, run_id="run-audit")
    memory_context_load(actor=actor, message="kafka consumer lag keeps growing")
    memory_mark_used(actor=actor, ids=[str(used.pk)])
    return ContextTrace.objects.get(run_id="run-audit")


def test_runs_list_and_trace_detail(client, owner, run):
    trace = run
    client.force_login(owner)
    html = client.get("/usage/").content.decode()
    assert "run-audit" in html and "audit-1" in html
    detail = client.get(f"/usage/traces/{trace.pk}/").content.decode()
    assert "ops/runbooks/lag" in detail and "yes" in detail
    assert "text" in detail and "trust" in detail  # score components


def test_hit_rates_and_never_used(client, owner, run):
    client.force_login(owner)
    rates = client.get("/usage/", {"view": "documents"}).content.decode()
    assert "runbooks/lag" in rates and "100%" in rates
    unused = client.get("/usage/", {"view": "unused"}).content.decode()
    assert "runbooks/cold" in unused and "runbooks/lag" not in unused


def test_an_expired_document_is_not_listed_as_never_used(client, owner, run):
    expired = make_document(
        WorkspaceStoreFactory(slug="gone"),
        "runbooks/expired",
        "Old freeze window.",
        expires_at=timezone.now() - timedelta(minutes=1),
    )
    client.force_login(owner)
    unused = client.get("/usage/", {"view": "unused"}).content.decode()
    assert "runbooks/cold" in unused and expired.path not in unused


def test_filters_and_bad_input(client, owner, run):
    client.force_login(owner)
    assert "run-audit" not in client.get("/usage/", {"run": "other"}).content.decode()
    assert "run-audit" in client.get("/usage/", {"conversation": "audit-1"}).content.decode()
    assert client.get("/usage/", {"view": "bogus", "page": "x"}).status_code == 200


def test_others_see_neither_the_run_nor_its_trace(client, outsider, reviewer, run):
    trace = run
    client.force_login(outsider)
    assert "run-audit" not in client.get("/usage/").content.decode()
    assert client.get(f"/usage/traces/{trace.pk}/").status_code == 404
    client.force_login(reviewer)
    assert client.get(f"/usage/traces/{trace.pk}/").status_code == 200


def test_usage_is_bounded_in_queries_with_1000_traces(
    client, owner, run, django_assert_max_num_queries
):
    trace = run
    ContextTrace.objects.bulk_create(
        ContextTrace(
            principal=owner,
            run_id=f"r{n}",
            message_sha256="0" * 64,
            candidates=trace.candidates,
            context_sha256="0" * 64,
            tokens=10,
            token_budget=2200,
        )
        for n in range(1000)
    )
    client.force_login(owner)
    for view in ("runs", "documents", "unused"):
        with django_assert_max_num_queries(8):
            assert client.get("/usage/", {"view": view}).status_code == 200


def test_events_page_filters_and_follows_the_event_stream(client, owner, reviewer, run):
    client.force_login(owner)
    html = client.get("/events/").content.decode()
    newest = MemoryEvent.objects.order_by("-id").first().pk
    assert "memory.context.loaded" in html and 'hx-trigger="memory-event from:body"' in html
    assert f'data-event-stream="/api/v1/events/stream?after={newest}"' in html
    MemoryEvent.objects.create(type="memory.write.blocked", principal=owner, payload={"x": "<b>"})
    poll = client.get("/events/", {"after": newest}, headers={"HX-Request": "true"})
    body = poll.content.decode()
    assert "memory.write.blocked" in body and "memory.context.loaded" not in body
    assert "&lt;b&gt;" in body and "<html" not in body
    only = client.get("/events/", {"type": "memory.write.blocked"}).content.decode()
    assert "memory.context.loaded" not in only.split("<tbody")[1]
    # The poll's address loaded as a page (a reload, a bookmark) is the page.
    page = client.get("/events/", {"after": newest}).content.decode()
    assert "<html" in page and "memory.context.loaded" in page


def rows(html: str) -> str:
    return html.split('<tbody id="event-rows">')[1]


def test_events_of_others_stay_hidden_except_from_reviewers(client, outsider, reviewer, run):
    client.force_login(outsider)
    assert "memory.context.loaded" not in rows(client.get("/events/").content.decode())
    client.force_login(reviewer)
    assert "memory.context.loaded" in rows(client.get("/events/").content.decode())


def test_events_are_bounded_in_queries(client, reviewer, django_assert_max_num_queries):
    MemoryEvent.objects.bulk_create(
        MemoryEvent(type="memory.document.written", principal=reviewer, payload={"n": n})
        for n in range(1000)
    )
    client.force_login(reviewer)
    with django_assert_max_num_queries(8):
        html = client.get("/events/").content.decode()
    assert "Older events" in html


def test_the_queue_count_in_the_navigation(client, owner, reviewer):
    client.force_login(reviewer)
    assert 'hx-trigger="load, queue-changed from:body"' in client.get("/").content.decode()
    assert client.get("/queue/count").content == b""
    client.force_login(owner)
    assert client.get("/queue/count").content == b""


# Teams and grants ----------------------------------------------------------


@pytest.fixture
def staff(db):
    return UserFactory(username="root", is_superuser=True)


def test_only_staff_manage_teams(client, owner, reviewer):
    for user in (owner, reviewer):
        client.force_login(user)
        assert client.get("/teams/").status_code == 403
        response = client.post("/teams/grants", {"system_slug": "x", "team": "t", "level": "read"})
        assert response.status_code == 403
    assert not SystemGrant.objects.exists()


def test_staff_grant_and_remove(client, staff, owner):
    client.force_login(staff)
    response = client.post(
        "/teams/grants",
        {"system_slug": "ledger", "team": "payments", "level": "manage"},
        follow=True,
    )
    # What was created along with the grant is said, so a typo shows.
    assert (
        "Grant saved: payments may manage ledger. payments is a new team, with no members yet. "
        "ledger is a new system."
    ) in response.content.decode()
    again = client.post(
        "/teams/grants", {"system_slug": "ledger", "team": "payments", "level": "read"}, follow=True
    )
    assert "Grant saved: payments may read ledger.</" in again.content.decode()
    client.post("/teams/grants", {"system_slug": "ledger", "team": "payments", "level": "manage"})
    grant = SystemGrant.objects.get(system__slug="ledger", team__name="payments")
    assert grant.level == "manage"
    owner.groups.add(grant.team)
    client.force_login(owner)
    assert client.get("/systems/ledger/").status_code == 200
    client.force_login(staff)
    html = client.get("/teams/").content.decode()
    assert "payments" in html and "ledger" in html
    client.post(f"/teams/grants/{grant.pk}/remove")
    client.force_login(owner)
    assert client.get("/systems/ledger/").status_code == 404


def test_staff_revoke_memory_for_a_team_and_tools_answer_403(client, staff, owner, api_client_for):
    team = Group.objects.create(name="contractors")
    owner.groups.add(team)
    client.force_login(staff)
    client.post(f"/teams/{team.pk}/policy", {"manage": "on"})
    policy = GroupMemoryPolicy.objects.get(group=team)
    assert not policy.can_read_memory and policy.can_manage_memory
    api = api_client_for(owner)
    response = api.post("/api/v1/tools/memory_search", {"query": "kafka"}, format="json")
    assert response.status_code == 403
    client.force_login(owner)
    assert "turned off by an administrator" in client.get("/mine/").content.decode()


def test_a_refused_grant_keeps_what_was_typed_beside_the_error(client, staff):
    client.force_login(staff)
    typed = {"system_slug": "Payments API!", "team": "my team", "level": "manage"}
    response = client.post("/teams/grants", typed)
    assert response.status_code == 400
    html = response.content.decode()
    assert (
        "Not saved. What you typed is still here: System: A system is named in lowercase"
    ) in html
    assert 'value="Payments API!"' in html and 'value="my team"' in html
    assert '<option value="manage" selected>' in html
    assert not SystemGrant.objects.exists()


def test_a_bad_system_name_is_refused_once_saying_what_is_allowed(client, staff):
    client.force_login(staff)
    typed = {"system_slug": "Bad Slug!", "team": "sre", "level": "read"}
    response = client.post("/teams/grants", typed)
    html = response.content.decode()
    assert response.status_code == 400
    assert html.count("A system is named in lowercase letters") == 2  # summary and field
    assert "Enter a valid" not in html
    assert not SystemGrant.objects.exists()


def test_bad_team_forms_are_refused(client, staff):
    client.force_login(staff)
    response = client.post("/teams/grants", {"system_slug": "no spaces!", "team": ""})
    assert response.status_code == 400
    assert "Team: This field is required." in response.content.decode()
    assert not SystemGrant.objects.exists()
    assert client.post("/teams/999999/policy", {}).status_code == 404
    assert client.post("/teams/grants/999999/remove").status_code == 404


def test_system_grant_resolver_is_shared_by_tools_and_pages(client, owner, api_client_for):
    grant = system_grant_set(system_slug="infra", team="sre", level="read")
    make_document(grant.system.store, "facts/dns", "Infra runs the DNS resolvers.")
    api = api_client_for(owner)
    body = {"query": "who runs the dns resolvers", "stores": ["system:infra"]}
    assert api.post("/api/v1/tools/memory_search", body, format="json").status_code == 404
    client.force_login(owner)
    assert client.get("/systems/infra/").status_code == 404
    owner.groups.add(grant.team)
    assert api.post("/api/v1/tools/memory_search", body, format="json").status_code == 200
    assert client.get("/systems/infra/").status_code == 200


def test_older_events_lead_back_to_the_latest(client, owner):
    MemoryEvent.objects.bulk_create(
        MemoryEvent(type="memory.x", principal=owner, payload={"n": n}) for n in range(120)
    )
    client.force_login(owner)
    first = client.get("/events/").content.decode()
    assert "Older events" in first and "Latest events" not in first
    older = re.search(r'href="\?before=(\d+)"', first).group(1)
    second = client.get("/events/", {"before": older}).content.decode()
    assert '<a href="?">Latest events</a>' in second and "Older events" in second
    last = client.get("/events/", {"before": re.findall(r"before=(\d+)", second)[-1]})
    assert "Latest events" in last.content.decode()
    assert "Older events" not in last.content.decode()


def test_a_slug_the_store_would_refuse_is_refused_under_the_field(client, staff):
    client.force_login(staff)
    typed = {"system_slug": "Payments-API", "team": "payments", "level": "read"}
    response = client.post("/teams/grants", typed)
    assert response.status_code == 400
    html = response.content.decode()
    assert '<span class="field-error" id="id_system_slug_error"><strong>System:</strong>' in html
    assert "A system is named in lowercase letters, digits, &#x27;-&#x27; and &#x27;_&#x27;" in html
    assert 'value="Payments-API"' in html
    assert not SystemGrant.objects.exists() and not Group.objects.filter(name="payments").exists()


@pytest.mark.parametrize("team", ["\u200b", "pay\u200bments", "ops\ufeff"])
def test_a_team_name_with_zero_width_characters_is_refused(client, staff, team):
    client.force_login(staff)
    response = client.post(
        "/teams/grants", {"system_slug": "ledger", "team": team, "level": "read"}
    )
    assert response.status_code == 400
    assert 'id="id_team_error"' in response.content.decode()
    assert not Group.objects.exists() and not SystemGrant.objects.exists()


def test_the_poll_of_a_page_with_a_bad_type_is_still_the_poll(client, owner, run):
    client.force_login(owner)
    page = client.get("/events/", {"type": "bogus"})
    html = page.content.decode()
    assert page.status_code == 200 and "That filter was ignored." in html
    newest = MemoryEvent.objects.order_by("-id").first().pk
    # The poll the page asks for no longer carries the bad type.
    assert f'hx-get="/events/?after={newest}"' in html
    MemoryEvent.objects.create(type="memory.write.blocked", principal=owner)
    poll = client.get(
        "/events/", {"after": newest, "type": "bogus"}, headers={"HX-Request": "true"}
    )
    body = poll.content.decode()
    assert poll.status_code == 200 and "<html" not in body
    assert "memory.write.blocked" in body and 'id="event-poll"' in body
    # An unreadable `after` is still answered as the poll, going on from now.
    odd = client.get("/events/", {"after": "x"}, headers={"HX-Request": "true"})
    newest = MemoryEvent.objects.order_by("-id").first().pk
    assert "<html" not in odd.content.decode()
    assert f'hx-get="/events/?after={newest}"' in odd.content.decode()


def test_a_bad_run_filter_keeps_the_tab_asked_for(client, owner, run):
    client.force_login(owner)
    html = client.get("/usage/", {"view": "unused", "run": "r" * 201}).content.decode()
    assert 'href="?view=unused" aria-current="page"' in html
    assert "runbooks/cold" in html and "That filter was ignored." in html


def test_every_event_type_recorded_can_be_filtered_by(client, reviewer):
    """The choices come from EVENT_TYPES; each type a module records is
    listed there (so webhooks may subscribe to it, and the page filter by it)."""
    recorded = set()
    for path in (ROOT / "memory_app").rglob("*.py"):
        recorded |= set(re.findall(r'"(memory\.[a-z_]+\.[a-z_]+)"', path.read_text()))
    recorded |= set(
        re.findall(r'"(memory\.[a-z_]+)"', (ROOT / "review_app/views_export.py").read_text())
    )
    assert recorded and recorded <= set(EVENT_TYPES)
    MemoryEvent.objects.create(type="memory.document.redacted", principal=reviewer)
    MemoryEvent.objects.create(type="memory.capture.completed", principal=reviewer)
    client.force_login(reviewer)
    for kind in ("memory.document.redacted", "memory.capture.completed"):
        response = client.get("/events/", {"type": kind})
        html = response.content.decode()
        assert f'<option value="{kind}" selected>' in html and "That filter" not in html
        assert rows(html).count("<code>memory.") == 1
