"""Acting on behalf of a reviewer reads that reviewer's own events, never the
review-wide outbox, on the polling endpoint and the stream alike."""

import pytest

from memory_app.models import MemoryEvent
from memory_app.services.principals import principal_upsert
from tests.factories import UserFactory
from tests.memory_app.api.conftest import remember_body

pytestmark = pytest.mark.django_db

BEHALF = {"HTTP_X_MEMORY_ON_BEHALF_OF": "rev"}


def _ids(response) -> list[int]:
    assert response.status_code == 200, response.content
    return [event["id"] for event in response.json()["events"]]


@pytest.fixture
def helper(db):
    return principal_upsert(username="helper", service_account=True, act_on_behalf=True)


@pytest.fixture
def rev(db):
    return UserFactory(username="rev", reviewer=True)


@pytest.fixture
def world(caller_for, agent, rev, api_client_for):
    """alice wrote in her private conversation; an agent proposed a draft
    that another reviewer rejected with a note; rev wrote in a conversation
    of rev's own. Returns rev's own event ids."""
    alice = UserFactory(username="alice")
    caller_for(alice, conversation="alice-chat").ok("memory_remember", remember_body(), 201)
    tools = caller_for(agent, conversation="agent-chat")
    draft = tools.ok("memory_remember", remember_body(path="nginx/crashloop"), 201)
    proposal = tools.ok(
        "memory_propose_promotion",
        {"id": draft["id"], "target_store": "workspace_runbooks", "rationale": "Worked twice."},
        202,
    )
    other = UserFactory(username="other-rev", reviewer=True)
    rejected = api_client_for(other).post(
        f"/api/v1/promotions/{proposal['review_item_id']}/reject",
        {"note": "alice's cluster only"},
        format="json",
    )
    assert rejected.status_code == 200
    caller_for(rev, conversation="rev-chat").ok("memory_remember", remember_body(), 201)
    own = MemoryEvent.objects.filter(principal=rev).order_by("id")
    return list(own.values_list("id", flat=True))


def test_on_behalf_of_a_reviewer_only_the_reviewers_own_events_are_returned(
    helper, world, api_client_for
):
    got = _ids(api_client_for(helper).get("/api/v1/events", **BEHALF))
    assert got == world
    assert len(MemoryEvent.objects.all()) > len(got)


def test_on_behalf_of_a_reviewer_another_users_conversation_is_404(helper, world, api_client_for):
    response = api_client_for(helper).get(
        "/api/v1/events", {"conversation": "alice-chat"}, **BEHALF
    )
    assert response.status_code == 404


def test_on_behalf_of_a_reviewer_the_review_queue_is_refused_as_well(helper, world, api_client_for):
    assert api_client_for(helper).get("/api/v1/promotions", **BEHALF).status_code == 403


def test_the_reviewer_as_themself_still_sees_every_event(rev, world, api_client_for):
    everything = list(MemoryEvent.objects.order_by("id").values_list("id", flat=True))
    assert _ids(api_client_for(rev).get("/api/v1/events", {"limit": 500})) == everything


def test_a_service_account_with_the_review_right_sees_only_its_own_events(world, api_client_for):
    bot = UserFactory(username="bot-reviewer", reviewer=True, service_account=True)
    mine = MemoryEvent.objects.create(type="memory.test", principal=bot)
    assert _ids(api_client_for(bot).get("/api/v1/events")) == [mine.id]


# The stream closes stale connections between reads: not inside a test's transaction.
@pytest.mark.django_db(transaction=True)
def test_the_stream_on_behalf_of_a_reviewer_follows_the_same_rule(helper, world, api_client_for):
    response = api_client_for(helper).get(
        "/api/v1/events/stream", HTTP_ACCEPT="text/event-stream", **BEHALF
    )
    frames = iter(response.streaming_content)
    assert next(frames) == b"retry: 2000\n\n"
    # Everyone else's events are older than rev's: one leaking would come first.
    streamed = [next(frames).split(b"\n", 1)[0] for _ in world]
    response.close()
    assert streamed == [f"id: {event_id}".encode() for event_id in world]
