"""A conversation comes into existence only with a write that succeeds.

A refused first write must leave nothing behind: otherwise whoever sends a
failing write first would hold the conversation id, and its rightful user
would get 404 on their own first write.
"""

import threading
import uuid

import pytest
from django.db import connections

from memory_app.models import Conversation, MemoryEvent, MemoryStore, Scope
from tests.factories import UserFactory
from tests.memory_app.api.capture_transcripts import CHATTY, SECRET_LEAK, TOKEN
from tests.memory_app.api.conftest import remember_body

pytestmark = pytest.mark.django_db

SECRET = "AKIAIOSFODNN7EXAMPLQ"
ONLY_A_SECRET = [
    SECRET_LEAK[0],
    {
        "role": "assistant",
        "content": "Rotated the CI registry credential.\n\nLessons learned:\n"
        f"- The registry token for CI is {TOKEN}; it lives in the ci-secrets vault path.",
    },
]


@pytest.fixture
def alice(db):
    return UserFactory(username="alice")


@pytest.fixture
def bob(db):
    return UserFactory(username="bob")


def _refused(caller, tool: str, body: dict, status: int) -> dict:
    response = caller(tool, body)
    assert response.status_code == status, response.content
    return response.json()


def _assert_nothing_left() -> None:
    assert not Conversation.objects.filter(external_id="c1").exists()
    assert not MemoryStore.objects.filter(scope=Scope.CONVERSATION).exists()


def _assert_alice_claims_it(caller_for, alice) -> None:
    caller_for(alice, conversation="c1").ok("memory_remember", remember_body(), status=201)
    conversation = Conversation.objects.get(external_id="c1")
    assert conversation.created_by == alice
    assert list(conversation.participants.all()) == [alice]


@pytest.mark.parametrize(
    ("tool", "body", "status"),
    [
        pytest.param(
            "memory_remember", {"store": "conversation", "content": SECRET}, 422, id="scanner"
        ),
        pytest.param("memory_remember", {"store": "conversation"}, 400, id="bad-input"),
        pytest.param(
            "memory_remember", remember_body(store="workspace_runbooks"), 403, id="policy"
        ),
        pytest.param("memory_remember", remember_body(store="workspace_nothing"), 404, id="store"),
        pytest.param("memory_delete", {"id": str(uuid.uuid4())}, 404, id="delete"),
    ],
)
def test_a_refused_first_write_leaves_the_conversation_to_its_rightful_user(
    caller_for, alice, bob, runbooks, tool, body, status
):
    _refused(caller_for(bob, conversation="c1"), tool, body, status)
    _assert_nothing_left()
    _assert_alice_claims_it(caller_for, alice)


def test_a_service_account_without_its_run_claims_nothing(caller_for, alice):
    bot = UserFactory(username="bot", service_account=True)
    body = _refused(caller_for(bot, conversation="c1", run=None), "memory_remember", {}, 400)
    assert body["error"] == "invalid_input"
    _refused(caller_for(bot, conversation="c1", run=None), "memory_remember", remember_body(), 400)
    _assert_nothing_left()
    _assert_alice_claims_it(caller_for, alice)


def test_writes_that_keep_nothing_claim_nothing(caller_for, alice, bob):
    mine = caller_for(bob)
    kept = mine.ok(
        "memory_remember",
        {
            "store": "user",
            "path": "prefs/lang",
            "content": "Answers in English.",
            "doc_type": "user_preference",
        },
        status=201,
    )
    again = caller_for(bob, conversation="c1").ok(
        "memory_remember",
        {
            "store": "user",
            "path": "prefs/lang",
            "content": "Answers in English.",
            "doc_type": "user_preference",
        },
    )
    assert again["outcome"] == "unchanged"
    patched = caller_for(bob, conversation="c1").ok(
        "memory_patch",
        {"id": kept["id"], "expected_sha256": kept["sha256"], "content": "Answers in English."},
    )
    assert patched["version"] == kept["version"]
    assert not Conversation.objects.filter(external_id="c1").exists()
    _assert_alice_claims_it(caller_for, alice)


@pytest.mark.parametrize("messages", [CHATTY, ONLY_A_SECRET], ids=["chatty", "all-blocked"])
def test_a_capture_that_keeps_nothing_claims_nothing(caller_for, alice, bob, messages):
    body = caller_for(bob, conversation="c1").ok("memory_capture", {"messages": messages})
    assert body["kept"] == []
    _assert_nothing_left()
    summary = MemoryEvent.objects.get(type="memory.capture.completed")
    assert (summary.principal, summary.conversation) == (bob, None)
    _assert_alice_claims_it(caller_for, alice)


def test_a_capture_that_keeps_a_draft_creates_the_conversation(caller_for, bob):
    body = caller_for(bob, conversation="c1").ok("memory_capture", {"messages": SECRET_LEAK})
    assert len(body["kept"]) == 1
    conversation = Conversation.objects.get(external_id="c1")
    assert list(conversation.participants.all()) == [bob]
    blocked = MemoryEvent.objects.get(type="memory.write.blocked")
    assert blocked.conversation == conversation


@pytest.mark.parametrize(
    ("body", "status", "event"),
    [
        ({"store": "conversation", "content": SECRET}, 422, "memory.write.blocked"),
        (remember_body(store="workspace_runbooks"), 403, "memory.policy.denied"),
    ],
)
def test_a_refused_first_write_still_records_its_refusal(
    caller_for, bob, runbooks, body, status, event
):
    answer = _refused(caller_for(bob, conversation="c1"), "memory_remember", body, status)
    assert answer["event"] == event
    recorded = MemoryEvent.objects.get(type=event)
    assert (recorded.principal, recorded.conversation) == (bob, None)
    assert recorded.payload["tool"] == "memory_remember"
    assert recorded.payload["conversation"] == "c1"
    assert recorded.payload["run_id"] == "run-1"
    assert SECRET not in str(recorded.payload)
    # The refusal is among the events bob may read.
    events = caller_for(bob).client.get("/api/v1/events").json()["events"]
    assert [e["type"] for e in events] == [event]


def test_a_refusal_in_an_existing_conversation_still_names_it(caller_for, bob):
    caller = caller_for(bob, conversation="c1")
    caller.ok("memory_remember", remember_body(), status=201)
    _refused(caller, "memory_remember", {"store": "conversation", "content": SECRET}, 422)
    recorded = MemoryEvent.objects.get(type="memory.write.blocked")
    assert recorded.conversation == Conversation.objects.get(external_id="c1")


def test_a_read_naming_an_unknown_conversation_creates_nothing(caller_for, bob):
    caller_for(bob, conversation="c1").ok("memory_list", {"store": "conversation"})
    _assert_nothing_left()


def _race(calls) -> list[int]:
    """Run each call on its own connection, all let go at once; their statuses."""
    barrier = threading.Barrier(len(calls))
    statuses: list[int] = []

    def run(call) -> None:
        try:
            barrier.wait(timeout=60)
            statuses.append(call().status_code)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(call,)) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return statuses


def _first_write(caller, n: int):
    body = remember_body(path=f"race/{n}", content=f"distinct value number {n} " * 3)
    return lambda: caller("memory_remember", body)


@pytest.mark.django_db(transaction=True)
def test_racing_first_writes_of_one_user_share_one_conversation(caller_for):
    writer = UserFactory(username="writer")
    callers = [caller_for(writer, conversation="c1") for _ in range(6)]
    statuses = _race([_first_write(caller, n) for n, caller in enumerate(callers)])
    assert statuses == [201] * 6
    conversation = Conversation.objects.get(external_id="c1")
    assert list(conversation.participants.all()) == [writer]
    assert MemoryStore.objects.filter(conversation=conversation).count() == 1


@pytest.mark.django_db(transaction=True)
def test_of_two_users_racing_for_a_new_conversation_one_holds_it(caller_for):
    users = [UserFactory(username="alice"), UserFactory(username="bob")]
    callers = [caller_for(user, conversation="c1") for user in users for _ in range(3)]
    statuses = _race([_first_write(caller, n) for n, caller in enumerate(callers)])
    assert sorted(statuses) == [201] * 3 + [404] * 3
    [owner] = Conversation.objects.get(external_id="c1").participants.all()
    assert owner in users


@pytest.mark.django_db(transaction=True)
def test_a_refused_write_racing_a_good_one_never_takes_the_conversation(caller_for):
    alice, bob = UserFactory(username="alice"), UserFactory(username="bob")
    refused = caller_for(bob, conversation="c1")
    good = caller_for(alice, conversation="c1")
    statuses = _race(
        [
            lambda: refused("memory_remember", {"store": "conversation", "content": SECRET}),
            _first_write(good, 0),
        ]
    )
    # Refused while alice's write was open or before it began (422), or
    # turned away from alice's conversation once hers committed (404).
    assert sorted(statuses) in ([201, 404], [201, 422])
    assert list(Conversation.objects.get(external_id="c1").participants.all()) == [alice]
