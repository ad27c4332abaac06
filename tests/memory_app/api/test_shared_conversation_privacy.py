"""Two people in one conversation: one's turns read their own store and the
systems they are granted, and the other must not learn those documents'
paths or stores from the events, traces or usage the turns leave."""

import pytest

from memory_app.models import ContextTrace, MemoryDocument, MemoryUsage, System, Trust
from memory_app.services.conversations import conversation_open
from memory_app.services.principals import system_grant_set
from memory_app.services.stores import store_for_user
from tests.factories import UserFactory, make_document

pytestmark = pytest.mark.django_db

HIDDEN = ("oncology-appointment", "acquisition-zeta", "hidden-pref", "vault-svc")


@pytest.fixture
def alice_and_bob():
    system_grant_set(system_slug="vault-svc", team="vault-team", level="read")
    alice = UserFactory(username="alice")
    bob = UserFactory(username="bob", teams=["vault-team"])
    make_document(
        store_for_user(user=bob),
        path="health/oncology-appointment",
        title="Screening appointment",
        content="Bob's cancer screening appointment is on Tuesday.",
        trust=Trust.USER_AUTHORED,
    )
    make_document(
        System.objects.get(slug="vault-svc").store,
        path="incidents/acquisition-zeta",
        title="Screening project",
        content="The cancer screening project is acquired under the name zeta.",
        trust=Trust.ADMIN_APPROVED,
    )
    conversation_open(user=alice, external_id="shared").participants.add(bob)
    return alice, bob


@pytest.fixture
def bobs_turns(alice_and_bob, caller_for):
    """Bob's agent reads context and writes to his own store and to the
    shared conversation's store, in the shared conversation."""
    _, bob = alice_and_bob
    bob_tools = caller_for(bob, conversation="shared")
    loaded = bob_tools.ok("memory_context", {"message": "cancer screening appointment"})
    assert {d["path"] for d in loaded["documents"]} >= {
        "health/oncology-appointment",
        "incidents/acquisition-zeta",
    }
    private = {
        "store": "user",
        "path": "prefs/hidden-pref",
        "title": "Theme",
        "doc_type": "user_preference",
    }
    bob_tools.ok(
        "memory_remember", {**private, "content": "Bob prefers the dark theme."}, status=201
    )
    shared = {"store": "conversation", "path": "plan/rollout", "title": "Rollout"}
    bob_tools.ok("memory_remember", {**shared, "content": "Roll out on Thursday."}, status=201)


def test_the_event_feed_shows_her_the_shared_store_only(alice_and_bob, bobs_turns, api_client_for):
    alice, _ = alice_and_bob
    answer = api_client_for(alice).get("/api/v1/events")
    assert answer.status_code == 200
    events = answer.json()["events"]
    assert [(e["type"], e["payload"]["path"]) for e in events] == [
        ("memory.document.written", "plan/rollout")
    ]
    assert not any(word in answer.content.decode() for word in HIDDEN)


def test_the_pages_show_her_neither_his_turns_nor_his_documents(alice_and_bob, bobs_turns, client):
    alice, _ = alice_and_bob
    client.force_login(alice)
    page = client.get("/events/").content.decode()
    assert "plan/rollout" in page
    assert not any(word in page for word in HIDDEN)
    trace = ContextTrace.objects.get()
    assert client.get(f"/usage/traces/{trace.pk}/").status_code == 404
    usage = client.get("/usage/").content.decode()
    assert not any(word in usage for word in HIDDEN)


def test_bob_still_sees_his_own_turns(alice_and_bob, bobs_turns, client):
    _, bob = alice_and_bob
    client.force_login(bob)
    trace = ContextTrace.objects.get()
    page = client.get(f"/usage/traces/{trace.pk}/").content.decode()
    assert "acquisition-zeta" in page
    assert MemoryUsage.objects.filter(principal=bob).exists()


def test_a_proposal_of_the_shared_draft_keeps_its_target_from_her(
    alice_and_bob, bobs_turns, caller_for, api_client_for
):
    alice, bob = alice_and_bob
    draft = MemoryDocument.objects.get(path="plan/rollout")
    caller_for(bob, conversation="shared").ok(
        "memory_propose_promotion",
        {
            "id": str(draft.pk),
            "target_store": "system:vault-svc",
            "target_path": "incidents/acquisition-zeta-plan",
            "rationale": "The rollout plan holds.",
        },
        status=202,
    )
    answer = api_client_for(alice).get("/api/v1/events").content.decode()
    assert "plan/rollout" in answer
    assert not any(word in answer for word in HIDDEN)


def test_she_sees_what_an_agent_acting_for_her_writes_to_her_own_store(
    alice_and_bob, caller_for, api_client_for
):
    alice, _ = alice_and_bob
    helper = UserFactory(username="helper", service_account=True, act_on_behalf=True)
    helper_tools = caller_for(helper, conversation="shared").with_headers(
        **{"X-Memory-On-Behalf-Of": "alice"}
    )
    body = {
        "store": "user",
        "path": "prefs/theme",
        "title": "Theme",
        "doc_type": "user_preference",
        "content": "Alice prefers the light theme.",
    }
    helper_tools.ok("memory_remember", body, status=201)
    events = api_client_for(alice).get("/api/v1/events").json()["events"]
    assert [e["payload"]["path"] for e in events] == ["prefs/theme"]
