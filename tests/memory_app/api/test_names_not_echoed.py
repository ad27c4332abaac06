"""A name that matched nothing is repeated in the error only when it reads
as a name: a key or token pasted in the wrong place is not sent back."""

import json

import pytest

from memory_app.mcp.bridge import tool_call

pytestmark = pytest.mark.django_db

AWS_KEY = "AKIA" + "ESZYCIDPYOPUMZGD"
TOKEN = "ghp_" + "9382dffx1kVZQ2tqMnMcLRkBOzZU3G8xI7CG"
LOWER_HEX = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b"


@pytest.mark.parametrize("name", [AWS_KEY, TOKEN, f"system:{LOWER_HEX}"])
def test_an_unknown_store_that_looks_like_a_secret_is_not_repeated(tools, name):
    response = tools("memory_list", {"store": name})
    assert response.status_code == 404
    assert response.json()["detail"] == "No store named that name."
    assert name not in response.content.decode()


def test_an_unknown_store_name_is_repeated(tools):
    response = tools("memory_list", {"store": "workspace_runbok"})
    assert response.json()["detail"] == "No store named 'workspace_runbok'."


def test_an_unknown_field_is_named_unless_it_looks_like_a_secret(tools):
    response = tools(
        "memory_remember",
        {"store": "conversation", "content": "x", "titel": "y", "entities": {TOKEN: "z"}},
    )
    assert response.status_code == 400
    fields = response.json()["fields"]
    assert "titel" in fields
    assert fields["entities"] == ["An unknown field; its name is not repeated."]
    assert TOKEN not in response.content.decode()


def test_an_unknown_mcp_tool_that_looks_like_a_secret_is_not_repeated(agent):
    outcome = tool_call(TOKEN, {}, {}, "127.0.0.1")
    assert outcome.status == 404
    assert TOKEN not in json.dumps(outcome.data)
    assert tool_call("memory_serch", {}, {}, "127.0.0.1").data["detail"] == (
        "No tool named 'memory_serch'."
    )
