"""The API answers JSON whatever the client accepts, its errors included,
and an error names the argument the caller sent."""

import httpx
import pytest
from rest_framework.test import APIClient

from memory_app.services.principals import api_key_issue
from tests.factories import UserFactory

SEARCH = "/api/v1/tools/memory_search"


@pytest.mark.django_db
@pytest.mark.parametrize("accept", ["text/html", "text/event-stream", "application/xml"])
def test_a_call_without_a_token_is_401_in_json_whatever_it_accepts(accept):
    response = APIClient().post(SEARCH, {"query": "x"}, format="json", HTTP_ACCEPT=accept)
    assert response.status_code == 401, response.content
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"] == "not_authenticated"


@pytest.mark.django_db
def test_a_call_accepting_only_html_is_answered_in_json(api_client_for, owner):
    response = api_client_for(owner).post(
        SEARCH, {"query": "x"}, format="json", HTTP_ACCEPT="text/html"
    )
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"results": []}


@pytest.mark.django_db
def test_the_schema_still_follows_accept(client):
    yaml = client.get("/api/v1/schema")
    assert yaml["Content-Type"].startswith("application/vnd.oai.openapi")
    json = client.get("/api/v1/schema", HTTP_ACCEPT="application/json")
    assert json["Content-Type"].startswith("application/json")


@pytest.mark.django_db(transaction=True)
def test_errors_of_the_event_stream_are_json(asgi_server):
    key = api_key_issue(user=UserFactory(username="streamer")).raw
    url = f"{asgi_server.url}/api/v1/events/stream"
    accept = {"Accept": "text/event-stream"}
    bad = httpx.get(url, headers={**accept, "Authorization": f"Token {key}", "Last-Event-ID": "x"})
    anonymous = httpx.get(url, headers=accept)
    expected = ((bad, 400, "invalid_input"), (anonymous, 401, "not_authenticated"))
    for response, status, error in expected:
        assert response.status_code == status, response.content
        assert response.headers["content-type"] == "application/json"
        assert response.json()["error"] == error


@pytest.mark.django_db
def test_the_conversation_store_without_its_header_names_the_stores_argument(caller_for, owner):
    response = caller_for(owner, conversation=None)(
        "memory_search", {"query": "x", "stores": ["user", "conversation"]}
    )
    assert response.status_code == 400, response.content
    assert list(response.json()["fields"]) == ["stores"]
