import pytest
from rest_framework.test import APIClient

from memory_app.services.principals import api_key_issue
from tests.factories import UserFactory
from tests.memory_app.api.conftest import remember_body

pytestmark = pytest.mark.django_db


def _events(user, **params):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_key_issue(user=user).raw}")
    response = client.get("/api/v1/events", params)
    assert response.status_code == 200, response.content
    return response.json()


def test_events_are_read_in_order_by_cursor(tools, agent):
    for n in range(3):
        tools.ok("memory_remember", remember_body(path=f"e/{n}", content=f"fact {n}"), 201)
    first = _events(agent, limit=2)
    assert [e["type"] for e in first["events"]] == ["memory.document.written"] * 2
    rest = _events(agent, after=first["next_after"])
    assert len(rest["events"]) == 1
    assert rest["events"][0]["id"] > first["next_after"]
    assert _events(agent, after=rest["next_after"]) == {
        "events": [],
        "next_after": rest["next_after"],
    }


def test_events_filter_by_conversation(caller_for, agent):
    caller_for(agent, conversation="c-a").ok("memory_remember", remember_body(), 201)
    caller_for(agent, conversation="c-b").ok("memory_remember", remember_body(), 201)
    only_a = _events(agent, conversation="c-a")["events"]
    assert len(only_a) == 1


def test_filtering_by_an_unknown_conversation_is_404_and_creates_nothing(agent):
    from memory_app.models import Conversation

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_key_issue(user=agent).raw}")
    assert client.get("/api/v1/events", {"conversation": "nope"}).status_code == 404
    assert not Conversation.objects.filter(external_id="nope").exists()


def test_other_principals_do_not_see_my_events(tools, reviewer):
    tools.ok("memory_remember", remember_body(), 201)
    assert _events(UserFactory(username="nosy"))["events"] == []
    assert len(_events(reviewer)["events"]) == 1


def test_a_bad_cursor_is_400(agent):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_key_issue(user=agent).raw}")
    response = client.get("/api/v1/events", {"after": "abc"})
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_input"


def test_the_manifest_lists_read_tools_unless_asked_for_writes(agent):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_key_issue(user=agent).raw}")
    read_only = client.get("/api/v1/tools").json()["tools"]
    everything = client.get("/api/v1/tools", {"include_write_tools": "true"}).json()["tools"]
    assert {t["name"] for t in read_only} == {
        "memory_search",
        "memory_context",
        "memory_mark_used",
        "memory_read",
        "memory_list",
        "memory_history",
    }
    assert {t["name"] for t in everything} >= {
        "memory_read",
        "memory_list",
        "memory_history",
        "memory_remember",
        "memory_patch",
        "memory_delete",
    }
    for tool in everything:
        schema = tool["input_schema"]
        assert schema["type"] == "object" and schema["properties"]
        assert "$ref" not in str(schema) and "$defs" not in schema
        # Function-calling APIs refuse these at the top of an input schema.
        assert not {"anyOf", "allOf", "oneOf"} & schema.keys(), tool["name"]
        assert tool["description"]
    remember = next(t for t in everything if t["name"] == "memory_remember")
    assert set(remember["input_schema"]["required"]) == {"store", "content"}


def test_the_openapi_document_covers_every_tool(client):
    paths = client.get("/api/v1/schema", HTTP_ACCEPT="application/json").json()["paths"]
    for name in [
        "memory_search",
        "memory_context",
        "memory_mark_used",
        "memory_read",
        "memory_list",
        "memory_history",
        "memory_remember",
        "memory_patch",
        "memory_delete",
    ]:
        operation = paths[f"/api/v1/tools/{name}"]["post"]
        assert "requestBody" in operation
        assert {"400", "401", "404"} <= set(operation["responses"])


def test_a_rule_left_out_of_the_manifest_is_still_the_servers(tools):
    """Naming a document by id or by store and path is checked server-side."""
    response = tools("memory_read", {"store": "conversation"})
    assert (response.status_code, response.json()["error"]) == (400, "invalid_input")
