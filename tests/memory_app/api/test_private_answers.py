"""Answers carrying memory are never kept by a cache; static files are."""

import pytest

from tests.memory_app.api.conftest import remember_body

pytestmark = pytest.mark.django_db


def test_a_tool_answer_is_not_stored(tools):
    body = tools.ok("memory_remember", remember_body(), status=201)
    response = tools("memory_read", {"id": body["id"]})
    assert response["Cache-Control"] == "no-store, private"


def test_a_page_with_private_memory_is_not_stored(client, owner):
    client.force_login(owner)
    assert client.get("/mine/")["Cache-Control"] == "no-store, private"


def test_a_static_file_stays_cacheable(client):
    response = client.get("/static/memory/app.css")
    assert response.status_code == 200
    assert "no-store" not in response.get("Cache-Control", "")
