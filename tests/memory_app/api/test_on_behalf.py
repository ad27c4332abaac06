"""X-Memory-On-Behalf-Of on every endpoint that reads as a principal, seen from outside."""

import pytest
from rest_framework.test import APIClient

from memory_app.services.principals import api_key_issue, principal_upsert
from tests.factories import UserFactory
from tests.memory_app.api.conftest import remember_body

pytestmark = pytest.mark.django_db

BEHALF = "HTTP_X_MEMORY_ON_BEHALF_OF"


def _client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_key_issue(user=user).raw}")
    return client


@pytest.fixture
def assistant(db):
    return principal_upsert(username="assistant", service_account=True, act_on_behalf=True)


@pytest.fixture
def turns(caller_for):
    """alice and bob each wrote in a conversation of their own."""
    alice, bob = UserFactory(username="alice"), UserFactory(username="bob")
    caller_for(alice, conversation="alice-chat").ok("memory_remember", remember_body(), 201)
    caller_for(bob, conversation="bob-chat").ok("memory_remember", remember_body(), 201)
    return alice, bob


def test_events_on_behalf_show_that_users_events_only(assistant, turns):
    client = _client(assistant)
    as_bob = client.get("/api/v1/events", **{BEHALF: "bob"})
    as_alice = client.get("/api/v1/events", **{BEHALF: "alice"})
    assert len(as_bob.json()["events"]) == 1
    assert len(as_alice.json()["events"]) == 1
    assert as_bob.json()["events"][0]["id"] != as_alice.json()["events"][0]["id"]
    assert client.get("/api/v1/events").json()["events"] == []


def test_events_filtered_by_conversation_on_behalf(assistant, turns):
    client = _client(assistant)
    mine = client.get("/api/v1/events", {"conversation": "bob-chat"}, **{BEHALF: "bob"})
    assert len(mine.json()["events"]) == 1
    theirs = client.get("/api/v1/events", {"conversation": "alice-chat"}, **{BEHALF: "bob"})
    assert theirs.status_code == 404


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("get", "/api/v1/events", None),
        ("get", "/api/v1/me", None),
        ("get", "/api/v1/tools", None),
        ("post", "/api/v1/tools/memory_search", {"query": "nginx"}),
        ("get", "/api/v1/promotions", None),
    ],
)
def test_without_the_right_the_header_is_403_everywhere(agent, turns, method, path, body):
    response = getattr(_client(agent), method)(path, body, format="json", **{BEHALF: "bob"})
    assert response.status_code == 403
    assert response.json()["error"] == "permission_denied"


@pytest.mark.parametrize("target", ["staff", "root"])
@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("get", "/api/v1/events", None),
        ("post", "/api/v1/tools/memory_list", {"store": "user"}),
    ],
)
def test_staff_and_superusers_are_never_a_target(assistant, target, method, path, body):
    staff = UserFactory(username="staff")
    staff.is_staff = True
    staff.save()
    UserFactory(username="root", is_superuser=True)
    response = getattr(_client(assistant), method)(path, body, format="json", **{BEHALF: target})
    assert response.status_code == 403
    assert response.json()["error"] == "permission_denied"


def test_a_search_on_behalf_resolves_that_users_turn_not_the_callers(assistant, turns):
    """The caller's key is read with the caller's own turn only: on behalf of
    alice, her conversation and its store are found; as itself the assistant
    takes no part in it."""
    client = _client(assistant)
    call = {"format": "json", "HTTP_X_MEMORY_CONVERSATION": "alice-chat"}
    query = {"query": "nginx ingress crash loop"}
    as_alice = client.post("/api/v1/tools/memory_search", query, **call, **{BEHALF: "alice"})
    assert [hit["store"] for hit in as_alice.json()["results"]] == ["conversation"]
    assert client.post("/api/v1/tools/memory_search", query, **call).status_code == 404


def test_a_service_account_is_never_a_target(assistant, caller_for, agent):
    """Acting on behalf of another agent would reach every conversation of
    that agent's: 403, and its memories stay out of the answer."""
    caller_for(agent, conversation="agent-chat").ok("memory_remember", remember_body(), 201)
    response = _client(assistant).post(
        "/api/v1/tools/memory_list",
        {"store": "conversation"},
        format="json",
        HTTP_X_MEMORY_CONVERSATION="agent-chat",
        **{BEHALF: "agent"},
    )
    assert response.status_code == 403
    assert response.json() == {
        "error": "permission_denied",
        "detail": "Nobody acts on behalf of a service account.",
    }
