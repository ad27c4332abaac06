"""What the pages and the event feed show follows access and state as they
are now, not as they were when an event was recorded or a proposal made:
a team left, "read memory" revoked, a document expired or deleted since."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import Group
from django.utils import timezone

from memory_app.actors import Actor
from memory_app.models import MemoryDocument, MemoryEvent
from memory_app.services.conversations import conversation_open
from memory_app.services.curate import document_state_set
from memory_app.services.principals import (
    group_memory_policy_set,
    principal_upsert,
    system_grant_set,
)
from memory_app.services.promote import memory_propose_promotion
from memory_app.services.remember import RememberInput, memory_remember
from memory_app.services.stores import store_workspace_ensure
from tests.factories import UserFactory, WorkspaceStoreFactory, make_document
from tests.review_app.test_queue import draft_with_embedding, unit

pytestmark = pytest.mark.django_db

CONFIDENTIAL = "Acquisition of Initech closes on Friday"


def rows(html: str) -> str:
    return html.split('<tbody id="event-rows">')[1].split("</tbody>")[0]


def tool(user, api_client_for, name: str, body: dict) -> dict:
    """A tool call as `user`, in a conversation of their own."""
    response = api_client_for(user).post(
        f"/api/v1/tools/{name}",
        body,
        format="json",
        HTTP_X_MEMORY_CONVERSATION=f"conv-{user.get_username()}",
        HTTP_X_MEMORY_RUN="run-1",
    )
    assert response.status_code in (200, 201), response.content
    return response.json()


# The events page: a document the viewer can no longer read -----------------


@pytest.fixture
def left_team(api_client_for):
    """alice writes in system:payments-api through team-pay, leaves the team,
    then her teammate dave gives the document a confidential title."""
    system_grant_set(system_slug="payments-api", team="team-pay", level="manage")
    alice = UserFactory(username="alice", teams=["team-pay"])
    dave = UserFactory(username="dave", teams=["team-pay"])
    written = tool(
        alice,
        api_client_for,
        "memory_remember",
        {
            "store": "system:payments-api",
            "path": "ledger/retries",
            "title": "Ledger retries",
            "content": "Retry the ledger write twice, then page the on-call.",
            "doc_type": "runbook",
        },
    )
    alice.groups.remove(Group.objects.get(name="team-pay"))
    tool(
        dave,
        api_client_for,
        "memory_patch",
        {"id": written["id"], "expected_sha256": written["sha256"], "title": CONFIDENTIAL},
    )
    return alice, dave, written["id"]


def test_alice_no_longer_reads_the_document(left_team, api_client_for):
    alice, _, document_id = left_team
    response = api_client_for(alice).post(
        "/api/v1/tools/memory_read", {"id": document_id}, format="json"
    )
    assert response.status_code == 404


def test_the_events_page_hides_the_title_and_store_of_a_document_no_longer_readable(
    client, left_team
):
    alice, _, document_id = left_team
    client.force_login(alice)
    html = rows(client.get("/events/").content.decode())
    assert "memory.document.written" in html  # her own event stays listed
    assert "<dt>Document</dt><dd>a document you cannot read</dd>" in html
    assert CONFIDENTIAL not in html and "Ledger retries" not in html
    # What her own call sent stays in the event's details; the document's
    # head as it is now (its title, its store's label) does not.
    assert "<dt>Store</dt><dd>system:payments-api</dd>" in html
    assert " in payments-api</dd>" not in html
    assert f"/documents/{document_id}/" not in html


def test_the_events_poll_hides_them_too(client, left_team):
    alice, _, _ = left_team
    client.force_login(alice)
    poll = client.get("/events/", {"after": 0}, headers={"HX-Request": "true"}).content.decode()
    assert "memory.document.written" in poll
    assert "a document you cannot read" in poll and CONFIDENTIAL not in poll


def test_a_teammate_still_sees_the_title_and_store(client, left_team):
    _, dave, document_id = left_team
    client.force_login(dave)
    html = rows(client.get("/events/").content.decode())
    assert f'<a href="/documents/{document_id}/">{CONFIDENTIAL}</a> in payments-api' in html


def test_the_event_feed_carries_no_title(left_team, api_client_for):
    alice, _, _ = left_team
    events = api_client_for(alice).get("/api/v1/events").json()["events"]
    assert [event["type"] for event in events] == ["memory.document.written"]
    assert CONFIDENTIAL not in str(events) and "Ledger retries" not in str(events)


def test_events_naming_readable_and_unreadable_documents_stay_bounded(
    client, owner, django_assert_max_num_queries
):
    readable = make_document(WorkspaceStoreFactory(slug="ops"), "runbooks/dns", "Use the cache.")
    secret = system_grant_set(system_slug="secret", team="secret-team", level="read").system
    hidden = make_document(
        secret.store,
        "plans/merger",
        "Not for everyone.",
        title=CONFIDENTIAL,
    )
    MemoryEvent.objects.bulk_create(
        MemoryEvent(
            type="memory.x",
            principal=owner,
            document=readable if n % 2 else hidden,
            payload={"n": n},
        )
        for n in range(120)
    )
    client.force_login(owner)
    with django_assert_max_num_queries(9):
        html = rows(client.get("/events/").content.decode())
    assert html.count(f'<a href="/documents/{readable.pk}/">dns</a> in ops') == 25
    assert html.count("a document you cannot read") == 25
    assert CONFIDENTIAL not in html


# "Read memory" revoked: no events -----------------------------------------


@pytest.fixture
def muted(owner, reviewer):
    """owner and reviewer each caused a context load, then their groups lost
    "read memory"."""
    for user in (owner, reviewer):
        MemoryEvent.objects.create(
            type="memory.context.loaded",
            principal=user,
            payload={"documents": [{"id": "x", "path": "runbooks/lag", "store": "ops"}]},
        )
        user.groups.add(Group.objects.get_or_create(name="muted")[0])
    group_memory_policy_set(team=Group.objects.get(name="muted"), read=False, manage=True)
    return owner, reviewer


def _refused(response) -> None:
    """As the read tools refuse: 403, before any event is sent."""
    assert (response.status_code, response.json()["error"]) == (403, "permission_denied")


@pytest.mark.parametrize("who", [0, 1])
def test_without_read_memory_the_event_feed_is_refused(muted, api_client_for, who):
    _refused(api_client_for(muted[who]).get("/api/v1/events"))


@pytest.mark.django_db(transaction=True)  # the stream closes its connections
@pytest.mark.parametrize("who", [0, 1])
def test_without_read_memory_the_event_stream_is_refused(muted, api_client_for, who):
    client = api_client_for(muted[who])
    _refused(client.get("/api/v1/events/stream", HTTP_ACCEPT="text/event-stream"))


def test_an_agent_without_read_memory_reads_no_events_on_behalf_of_a_user(api_client_for, teammate):
    MemoryEvent.objects.create(type="memory.context.loaded", principal=teammate, payload={})
    agent = principal_upsert(username="helper-bot", service_account=True, act_on_behalf=True)
    agent.groups.add(Group.objects.get_or_create(name="muted-bots")[0])
    group_memory_policy_set(team=Group.objects.get(name="muted-bots"), read=False, manage=True)
    _refused(
        api_client_for(agent).get(
            "/api/v1/events", HTTP_X_MEMORY_ON_BEHALF_OF=teammate.get_username()
        )
    )


@pytest.mark.parametrize("who", [0, 1])
def test_without_read_memory_the_events_page_lists_nothing(muted, client, who):
    client.force_login(muted[who])
    html = client.get("/events/").content.decode()
    assert "runbooks/lag" not in rows(html)
    assert "No events yet." in html


def test_with_read_memory_restored_the_events_come_back(muted, api_client_for):
    owner, _ = muted
    group_memory_policy_set(team=Group.objects.get(name="muted"), read=True, manage=True)
    events = api_client_for(owner).get("/api/v1/events").json()["events"]
    assert [event["type"] for event in events] == ["memory.context.loaded"]


# Expired documents are not active ------------------------------------------


@pytest.fixture
def shelf(db):
    """A store with one current document and one past its expiry that the
    expiry job has not tombstoned yet."""
    store = WorkspaceStoreFactory(slug="shelf")
    make_document(store, "notes/current", "Kafka lag: scale the consumers.")
    expired = make_document(store, "notes/expired", "Kafka lag: restart the brokers.")
    MemoryDocument.objects.filter(pk=expired.pk).update(
        expires_at=timezone.now() - timedelta(minutes=5)
    )
    return store


def test_the_api_lists_an_expired_document_as_inactive(shelf, api_client_for, owner):
    response = api_client_for(owner).post(
        "/api/v1/tools/memory_list", {"store": "shelf"}, format="json"
    )
    assert [d["path"] for d in response.json()["documents"]] == ["notes/current"]


def test_the_browser_does_not_list_an_expired_document_as_active(client, owner, shelf):
    client.force_login(owner)
    html = client.get("/browser/", {"store": shelf.pk, "state": "active"}).content.decode()
    assert "notes/current" in html and "notes/expired" not in html
    assert "1 document." in html


def test_the_browser_search_does_not_find_an_expired_document_as_active(client, owner, shelf):
    client.force_login(owner)
    html = client.get("/browser/", {"state": "active", "q": "kafka lag"}).content.decode()
    assert "notes/current" in html and "notes/expired" not in html


def test_the_store_counts_leave_out_an_expired_document(client, owner, shelf):
    client.force_login(owner)
    html = client.get("/browser/").content.decode()
    assert "1 active" in html and "2 active" not in html


def test_unfiltered_the_browser_lists_an_expired_document_as_expired(client, owner, shelf):
    client.force_login(owner)
    listing = client.get("/browser/", {"store": shelf.pk}).content.decode()
    found = client.get("/browser/", {"q": "kafka lag restart brokers"}).content.decode()
    for html in (listing, found):
        expired = html.split("notes/expired</code>")[1].split("</tr>")[0]
        assert "<td>expired</td>" in expired and "<td>active</td>" not in expired
    current = listing.split("notes/current</code>")[1].split("</tr>")[0]
    assert "<td>active</td>" in current


@pytest.fixture
def ledger(db):
    """System ledger: one current memory, one expired, one deleted."""
    store = system_grant_set(system_slug="ledger", team="ledger-readers", level="read").system.store
    make_document(store, "facts/owner", "The ledger team owns it.")
    expired = make_document(store, "facts/old-owner", "The billing team owns it.")
    MemoryDocument.objects.filter(pk=expired.pk).update(
        expires_at=timezone.now() - timedelta(minutes=1)
    )
    deleted = make_document(store, "facts/gone", "Gone.")
    document_state_set(
        user=UserFactory(username="root", is_superuser=True), document=deleted, tombstoned=True
    )
    return store


def test_the_systems_list_counts_only_live_unexpired_memories(client, ledger):
    client.force_login(UserFactory(username="reader", teams=["ledger-readers"]))
    html = client.get("/systems/").content.decode()
    assert '<td class="num">1</td>' in html.split("<code>system:ledger</code>")[1]


def test_the_system_card_lists_only_live_unexpired_memories(client, ledger):
    client.force_login(UserFactory(username="reader", teams=["ledger-readers"]))
    html = client.get("/systems/ledger/").content.decode()
    assert "facts/owner" in html
    assert "facts/old-owner" not in html and "facts/gone" not in html


# Similar memory on a queue card --------------------------------------------


@pytest.fixture
def agent(db):
    return UserFactory(username="agent", service_account=True)


def test_the_card_lists_no_similar_memory_deleted_or_expired_since(client, reviewer, agent):
    store = store_workspace_ensure(slug="workspace_runbooks", name="R")
    kept = make_document(store, "ops/kept", "Close.", embedding=unit(0.8, 0.6))
    deleted = make_document(store, "ops/deleted", "Close too.", embedding=unit(0.8, 0.6))
    expired = make_document(store, "ops/expired", "Close as well.", embedding=unit(0.8, 0.6))
    draft = draft_with_embedding(agent, unit(1.0))
    actor = Actor(user=agent, agent=agent, conversation=draft.store.conversation, run_id="run-s")
    item = memory_propose_promotion(
        actor=actor, document=draft, target_store="workspace_runbooks", rationale="r"
    ).item
    assert set(item.related_documents.all()) == {kept, deleted, expired}
    document_state_set(user=reviewer, document=deleted, tombstoned=True)
    MemoryDocument.objects.filter(pk=expired.pk).update(
        expires_at=timezone.now() - timedelta(minutes=1)
    )
    client.force_login(reviewer)
    html = client.get("/queue/").content.decode()
    related = html.split('<ul class="related">')[1].split("</ul>")[0]
    assert "workspace_runbooks/ops/kept" in related
    assert "ops/deleted" not in related and "ops/expired" not in related


def test_similar_memory_stays_one_query_for_many_cards(
    client, reviewer, agent, django_assert_max_num_queries
):
    store = store_workspace_ensure(slug="workspace_runbooks", name="R")
    near = [
        make_document(store, f"ops/near-{n}", f"Close {n}.", embedding=unit(0.8, 0.6))
        for n in range(3)
    ]
    for n in range(12):
        conversation = conversation_open(user=agent, external_id=f"similar-{n}")
        actor = Actor(user=agent, agent=agent, conversation=conversation, run_id=f"run-{n}")
        draft = memory_remember(
            actor=actor,
            data=RememberInput(store="conversation", path=f"fix/{n}", content=f"New fix {n}."),
        ).document
        MemoryDocument.objects.filter(pk=draft.pk).update(embedding=unit(1.0))
        draft.refresh_from_db()
        memory_propose_promotion(
            actor=actor, document=draft, target_store="workspace_runbooks", rationale="r"
        )
    document_state_set(user=reviewer, document=near[0], tombstoned=True)
    client.force_login(reviewer)
    with django_assert_max_num_queries(13):
        html = client.get("/queue/").content.decode()
    assert html.count("ops/near-1</code>") == 12 and "ops/near-0" not in html
