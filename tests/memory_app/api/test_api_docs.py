"""The OpenAPI document puts the agent tools first, with examples that are valid input."""

import pytest

from memory_app.api.manifest import tool_definitions
from memory_app.api.openapi import EXAMPLES
from memory_app.api.tools import TOOL_VIEWS
from tests.memory_app.api.conftest import remember_body

pytestmark = pytest.mark.django_db


@pytest.fixture
def schema(client):
    return client.get("/api/v1/schema", HTTP_ACCEPT="application/json").json()


def test_the_tools_come_first_in_manifest_order(schema):
    names = [tool["name"] for tool in tool_definitions()]
    paths = list(schema["paths"])
    assert paths[: len(names)] == [f"/api/v1/tools/{name}" for name in names]
    assert paths[len(names)] == "/api/v1/tools"
    assert schema["tags"][0]["name"] == "tools"
    assert "X-Memory-Conversation" in schema["info"]["description"]


def test_every_example_is_valid_input_for_its_tool(schema):
    models = {view.name: view.input_model for view in TOOL_VIEWS}
    for name, example in EXAMPLES.items():
        models[name].model_validate(example)
        body = schema["paths"][f"/api/v1/tools/{name}"]["post"]["requestBody"]
        assert body["content"]["application/json"]["example"] == example


def test_the_error_schema_holds_what_an_agent_acts_on(schema, tools):
    """A stale patch's answer, read by the schema: a client generated from
    it finds the sha to retry with."""
    error = schema["components"]["schemas"]["ErrorOut"]["properties"]
    assert {"current_sha256", "current_version", "findings", "reason", "event"} <= set(error)
    finding = schema["components"]["schemas"]["FindingOut"]["properties"]
    assert set(finding) == {"detector", "field", "start", "end", "blocking"}
    note = tools.ok("memory_remember", remember_body(), status=201)
    tools.ok("memory_patch", {"id": note["id"], "expected_sha256": note["sha256"], "content": "a"})
    stale = tools("memory_patch", {"id": note["id"], "expected_sha256": note["sha256"], "tags": []})
    assert stale.status_code == 409
    assert set(stale.json()) <= set(error)


def test_the_docs_page_forbids_other_hosts(client):
    response = client.get("/api/v1/docs")
    assert response.status_code == 200
    assert "default-src 'self'" in response["Content-Security-Policy"]
    html = response.content.decode()
    assert "https://" not in html and "http://" not in html


@pytest.mark.parametrize("path", ["/api/v1/docs", "/api/v1/schema"])
@pytest.mark.parametrize("method", ["post", "put", "patch", "delete", "options"])
def test_other_methods_on_the_docs_and_schema_are_405_in_the_error_shape(client, path, method):
    response = getattr(client, method)(path)
    assert response.status_code == 405
    assert response["Content-Type"] == "application/json"
    assert response["Allow"] == "GET, HEAD"
    assert response.json() == {
        "error": "method_not_allowed",
        "detail": f'Method "{method.upper()}" not allowed.',
    }


@pytest.mark.parametrize("path", ["/api/v1/docs", "/api/v1/schema"])
def test_a_bad_token_on_the_docs_and_schema_is_401_in_the_error_shape(client, path):
    response = client.get(path, HTTP_AUTHORIZATION="Token not-a-key")
    assert response.status_code == 401
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"] == "not_authenticated"


@pytest.mark.parametrize(
    ("path", "content_type"),
    [("/api/v1/docs", "text/html"), ("/api/v1/schema", "application/vnd.oai.openapi")],
)
def test_the_docs_and_schema_answer_head_as_get(client, path, content_type):
    response = client.head(path)
    assert response.status_code == 200
    assert response["Content-Type"].startswith(content_type)
    assert response.content == b""
