"""The home page as an inbox: what waits for each person, their decisions,
scanner blocks and the hit rate of injected memory; stores named as people
say them."""

import re
from datetime import timedelta

import pytest
from django.contrib.auth.models import Group
from django.utils import timezone

from memory_app.actors import Actor
from memory_app.dreams.proposals import propose_review
from memory_app.models import (
    DreamJob,
    DreamReviewItem,
    MemoryEvent,
    MemoryStore,
    MemoryUsage,
    System,
)
from memory_app.services.context import memory_context_load, memory_mark_used
from memory_app.services.conversations import conversation_open
from memory_app.services.principals import system_grant_set
from memory_app.services.promote import promotion_approve, promotion_reject
from memory_app.services.stores import store_for_system, store_for_user
from tests.factories import UserFactory, WorkspaceStoreFactory, make_document
from tests.review_app.test_deletions import request_deletion
from tests.review_app.test_queue import propose

pytestmark = pytest.mark.django_db

WAITING = re.compile(
    r"<strong>(?P<title>[^<]+)</strong></a>\s*"
    r'<span class="figure">(?P<count>[^<]+)</span>\s*'
    r'<span class="age">(?P<age>[^<]+)</span>'
)


def inbox(client) -> dict[str, tuple[str, str]]:
    """Each inbox card's title → (figure, the line under it)."""
    html = client.get("/").content.decode()
    return {m["title"]: (m["count"], m["age"]) for m in WAITING.finditer(html)}


@pytest.fixture
def agent(db):
    return UserFactory(username="agent", service_account=True)


@pytest.fixture
def staff(db):
    return UserFactory(username="root", is_superuser=True)


@pytest.fixture
def world(owner, agent):
    """Two proposals (one three days old), the owner's deletion request, a
    rescan flag, and a failed run that a later success did not make good."""
    first, _ = propose(agent, 0), propose(agent, 1)
    DreamReviewItem.objects.filter(pk=first).update(
        created_at=timezone.now() - timedelta(days=3, hours=1)
    )
    request_deletion(owner)
    rescan = DreamJob.objects.create(kind="rescan", status="succeeded")
    flagged = make_document(WorkspaceStoreFactory(slug="ops"), "notes/flagged", "Old text.")
    propose_review(rescan, flagged, rationale="Scanner now blocks this.")
    DreamJob.objects.create(kind="embed", status="failed", error="OSError")
    DreamJob.objects.create(kind="compact", status="failed", error="boom")
    DreamJob.objects.create(kind="compact", status="succeeded")


def test_a_reviewer_sees_everything_waiting_with_the_oldest_age(client, reviewer, world):
    client.force_login(reviewer)
    cards = inbox(client)
    assert cards["Promotion proposals"] == ("2", "oldest waiting 3\xa0days, 1\xa0hour")
    assert cards["Deletion requests"][0] == "1"
    assert cards["Rescan flags"][0] == "1"
    assert cards["Failed dream jobs"][0] == "1"  # the compact failure was made good


def test_a_plain_user_sees_only_the_requests_they_may_decide(client, owner, outsider, world):
    client.force_login(owner)
    cards = inbox(client)
    assert "Promotion proposals" not in cards and "Failed dream jobs" not in cards
    assert cards["Deletion requests"][0] == "1"
    assert cards["Rescan flags"] == ("0", "nothing waiting")  # in a workspace store
    client.force_login(outsider)
    assert inbox(client)["Deletion requests"] == ("0", "nothing waiting")


def test_staff_see_every_kind_and_the_admin_pages(client, staff, world):
    client.force_login(staff)
    html = client.get("/").content.decode()
    assert {"Promotion proposals", "Deletion requests", "Rescan flags", "Failed dream jobs"} <= (
        inbox(client).keys()
    )
    assert 'href="/teams/"' in html and 'href="/queue/"' in html


def test_a_service_account_is_offered_nothing_to_decide(client, agent, world):
    client.force_login(agent)
    html = client.get("/").content.decode()
    assert "Nothing here waits for your decision" in html
    assert "Promotion proposals" not in html


def test_my_recent_decisions_link_to_what_they_made(client, reviewer, agent):
    approved, rejected = propose(agent, 0), propose(agent, 1)
    document = promotion_approve(user=reviewer, item_id=approved, note="")
    promotion_reject(user=reviewer, item_id=rejected, note="Too <b>narrow</b>")
    client.force_login(reviewer)
    html = client.get("/").content.decode()
    section = html.split('id="decisions-heading"')[1]
    assert f'href="/documents/{document.pk}/"' in section
    assert "promote approved" in section and "promote rejected" in section
    assert "Too &lt;b&gt;narrow&lt;/b&gt;" in section
    assert "<td>workspace_runbooks</td>" in section


def test_others_decisions_are_not_mine(client, reviewer, owner, agent):
    promotion_approve(user=reviewer, item_id=propose(agent, 0), note="")
    client.force_login(owner)
    assert "You have not decided anything yet" in client.get("/").content.decode()


def test_scanner_blocks_today_count_what_the_person_may_see(client, owner, outsider, reviewer):
    for who in (owner, outsider):
        MemoryEvent.objects.create(type="memory.write.blocked", principal=who, payload={})
    old = MemoryEvent.objects.create(type="memory.write.blocked", principal=owner, payload={})
    MemoryEvent.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=2))
    client.force_login(owner)
    assert inbox(client)["Scanner blocks today"][0] == "1"
    client.force_login(reviewer)
    assert inbox(client)["Scanner blocks today"][0] == "2"


def test_the_hit_rate_counts_injected_memory_marked_used(client, owner, outsider):
    store = WorkspaceStoreFactory(slug="ops")
    used = make_document(store, "runbooks/lag", "Kafka consumer lag: scale the consumer group.")
    make_document(store, "runbooks/lag-alerts", "Kafka lag alerts: check the consumer group.")
    actor = Actor(
        user=owner,
        agent=owner,
        conversation=conversation_open(user=owner, external_id="hits"),
        run_id="r1",
    )
    memory_context_load(actor=actor, message="kafka consumer lag")
    memory_mark_used(actor=actor, ids=[str(used.pk)])
    injected = MemoryUsage.objects.count()
    assert injected >= 2
    client.force_login(owner)
    figure, line = inbox(client)["Hit rate of injected memory"]
    assert figure == f"{round(100 / injected)}%"
    assert line.startswith(f"1 of {injected} injected documents marked used")
    client.force_login(outsider)
    assert inbox(client)["Hit rate of injected memory"][0] == "—"


def test_stores_are_named_as_people_say_them(owner):
    conversation = conversation_open(user=owner, external_id="conv-incident-4711")
    system_grant_set(system_slug="payments-api", team="payments", level="read")
    system = store_for_system(system=System.objects.get(slug="payments-api"))
    assert system.label == "payments-api"
    assert store_for_user(user=owner).label == "owner (private)"
    assert conversation.store.label == "conversation conv-incident-4711"
    assert MemoryStore.objects.get(slug="workspace_runbooks").label == "workspace_runbooks"


def test_the_inbox_is_bounded_in_queries(client, reviewer, agent, django_assert_max_num_queries):
    for n in range(30):
        item_id = propose(agent, n)
        if n % 2:
            promotion_reject(user=reviewer, item_id=item_id, note="no")
    MemoryEvent.objects.bulk_create(
        MemoryEvent(type="memory.write.blocked", principal=agent, payload={}) for _ in range(200)
    )
    DreamJob.objects.bulk_create(DreamJob(kind="embed", status="failed") for _ in range(50))
    client.force_login(reviewer)
    with django_assert_max_num_queries(13):
        response = client.get("/")
    assert response.status_code == 200
    assert response.content.decode().count("promote rejected") == 8


def test_pages_name_stores_as_people_say_them(client, owner):
    system_grant_set(system_slug="payments-api", team="payments", level="read")
    owner.groups.add(Group.objects.get(name="payments"))
    conversation = conversation_open(user=owner, external_id="conv-incident-4711")
    kafka = "Kafka consumer lag: scale the consumer group."
    make_document(conversation.store, "notes/lag", kafka)
    make_document(System.objects.get(slug="payments-api").store, "runbooks/lag", kafka)
    mine = make_document(store_for_user(user=owner), "prefs/lag", kafka, doc_type="user_preference")
    actor = Actor(user=owner, agent=owner, conversation=conversation, run_id="r1")
    memory_context_load(actor=actor, message="kafka consumer lag")
    MemoryEvent.objects.create(type="memory.x", principal=owner, document=mine, payload={})
    MemoryUsage.objects.update(hit=True)
    names = ("payments-api", "owner (private)", "conversation conv-incident-4711")
    client.force_login(owner)
    browser = client.get("/browser/").content.decode()
    hit_rates = client.get("/usage/", {"view": "documents"}).content.decode()
    for name in names:
        assert f">{name}</a>" in browser
        assert f"<td>{name}</td>" in hit_rates
    assert "in owner (private)" in client.get("/events/").content.decode()
    assert f"user-{owner.pk}" not in browser + hit_rates


def test_the_hit_rate_links_to_the_same_figure_over_the_same_days(
    client, owner, django_assert_max_num_queries
):
    store = WorkspaceStoreFactory(slug="ops")
    used = make_document(store, "runbooks/lag", "Kafka consumer lag: scale the consumer group.")
    make_document(store, "runbooks/dns", "DNS timeouts: use the node-local cache.")
    conversation = conversation_open(user=owner, external_id="hits")
    for run in ("old", "new"):
        actor = Actor(user=owner, agent=owner, conversation=conversation, run_id=run)
        memory_context_load(actor=actor, message="kafka consumer lag and dns timeouts")
        memory_mark_used(actor=actor, ids=[str(used.pk)])
    # The first run was a month ago: counted all-time, not in the last 7 days.
    MemoryUsage.objects.filter(trace__run_id="old").update(
        created_at=timezone.now() - timedelta(days=30)
    )
    client.force_login(owner)
    figure, line = inbox(client)["Hit rate of injected memory"]
    injected = int(line.split(" of ")[1].split()[0])
    assert 'href="/usage/?view=documents&amp;days=7"' in client.get("/").content.decode()
    # The page's queries and the figure's one aggregate.
    with django_assert_max_num_queries(10):
        week = client.get("/usage/", {"view": "documents", "days": "7"}).content.decode()
    assert f"Injections of the last 7 days: {line.split(',')[0]} ({figure})." in week
    assert injections(week) == injected
    all_time = client.get("/usage/", {"view": "documents"}).content.decode()
    assert injections(all_time) == 2 * injected


def injections(html: str) -> int:
    """The hit-rates table's Injected column, summed."""
    cells = re.findall(
        r'<td class="num">(\d+)</td>\s*<td class="num">\d+</td>\s*<td class="num">', html
    )
    return sum(map(int, cells))


def test_the_stores_count_no_expired_document_as_active(client, owner):
    store = WorkspaceStoreFactory(slug="freeze")
    make_document(store, "windows/now", "Deploy freeze this week.")
    make_document(
        store,
        "windows/old",
        "Deploy freeze last month.",
        expires_at=timezone.now() - timedelta(minutes=1),
    )
    client.force_login(owner)
    page = client.get("/").content.decode()
    row = re.search(r"<code>freeze</code>.*?</tr>", page, re.S).group(0)
    assert '<td class="num">1</td>' in row
