"""Tool call bodies: sent without a Content-Length (chunked), held to the
body limit, and refused in the error shape when they are not JSON."""

import gzip
import io
import json

import httpx
import pytest
from django.conf import settings

from memory_app.services.principals import api_key_issue
from tests.factories import UserFactory
from tests.memory_app.api.conftest import remember_body

LIMIT = 4096


def chunks(body: bytes, size: int = 1000):
    """A body httpx sends with `Transfer-Encoding: chunked` and no Content-Length."""
    for start in range(0, len(body), size):
        yield body[start : start + size]


@pytest.fixture
def small_limit(settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = LIMIT


@pytest.fixture
def served(asgi_server, transactional_db):
    """A tool caller over a real HTTP connection to the ASGI server."""
    key = api_key_issue(user=UserFactory(username="chunky")).raw

    def call(tool: str, body: bytes, **headers) -> httpx.Response:
        return httpx.post(
            f"{asgi_server.url}/api/v1/tools/{tool}",
            content=chunks(body),
            headers={
                "Authorization": f"Token {key}",
                "Content-Type": "application/json",
                "X-Memory-Conversation": "conv-chunky",
                **headers,
            },
            timeout=30,
        )

    return call


def test_a_chunked_body_is_read_by_the_asgi_server(served):
    written = served("memory_remember", json.dumps(remember_body(path="chunked/note")).encode())
    assert written.status_code == 201, written.content
    assert "content-length" not in written.request.headers
    assert written.request.headers["transfer-encoding"] == "chunked"
    found = served("memory_search", json.dumps({"query": "ingress configmap"}).encode())
    assert found.status_code == 200, found.content
    assert [hit["path"] for hit in found.json()["results"]] == ["chunked/note"]


def test_a_chunked_body_up_to_the_limit_is_read(served, small_limit):
    body = json.dumps({"query": "x"}).encode()
    response = served("memory_search", body + b" " * (LIMIT - len(body)))
    assert response.status_code == 200, response.content


def test_a_chunked_body_over_the_limit_is_413(served, small_limit):
    body = json.dumps({"query": "x" * LIMIT}).encode()
    response = served("memory_search", body)
    assert response.status_code == 413, response.content
    assert response.json()["error"] == "too_large"


def test_a_declared_body_over_the_limit_is_413_too(asgi_server, transactional_db, small_limit):
    key = api_key_issue(user=UserFactory(username="declared")).raw
    response = httpx.post(
        f"{asgi_server.url}/api/v1/tools/memory_search",
        json={"query": "x" * LIMIT},
        headers={"Authorization": f"Token {key}"},
    )
    assert response.status_code == 413 and response.json()["error"] == "too_large"


@pytest.mark.django_db
def test_a_chunked_body_is_read_from_a_wsgi_server_that_ends_the_input(api_client_for, owner):
    """gunicorn and mod_wsgi remove the chunk framing and say so with
    `wsgi.input_terminated`; the test client then sends no Content-Length."""
    body = json.dumps({"query": "x"}).encode()
    response = api_client_for(owner).generic(
        "POST",
        "/api/v1/tools/memory_search",
        content_type="application/json",
        HTTP_TRANSFER_ENCODING="chunked",
        **{"wsgi.input": io.BytesIO(body), "wsgi.input_terminated": True},
    )
    assert response.status_code == 200, response.content
    assert response.json() == {"results": []}


@pytest.mark.django_db
def test_a_chunked_body_over_the_limit_under_wsgi_is_413(api_client_for, owner):
    body = json.dumps({"query": "x" * settings.DATA_UPLOAD_MAX_MEMORY_SIZE}).encode()
    response = api_client_for(owner).generic(
        "POST",
        "/api/v1/tools/memory_search",
        content_type="application/json",
        HTTP_TRANSFER_ENCODING="chunked",
        **{"wsgi.input": io.BytesIO(body), "wsgi.input_terminated": True},
    )
    assert response.status_code == 413 and response.json()["error"] == "too_large"


@pytest.mark.django_db
@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded"])
def test_a_body_that_is_not_json_is_400_invalid_input(api_client_for, owner, content_type):
    response = api_client_for(owner).post(
        "/api/v1/tools/memory_search", '{"query": "x"}', content_type=content_type
    )
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["error"] == "invalid_input"
    assert "application/json" in body["detail"]
    assert list(body["fields"]) == ["Content-Type"]


def test_a_page_is_not_made_to_take_a_body_over_the_limit(
    asgi_server, transactional_db, small_limit
):
    """The server stops receiving at the limit, before any middleware or
    login: nothing past it is held, in memory or on disk. A person's form
    gets the app's page saying why, not the API's JSON."""
    with httpx.Client(base_url=asgi_server.url, timeout=30) as browser:
        browser.get("/accounts/login/")  # its CSRF cookie, as a browser holds one
        response = browser.post(
            "/accounts/login/",
            content=chunks(b"x" * (20 * LIMIT)),
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
    assert response.status_code == 413
    assert response.headers["content-type"].startswith("text/html")
    assert f"The form is larger than the server accepts ({LIMIT} bytes)" in response.text


@pytest.mark.django_db
@pytest.mark.parametrize("encoding", ["gzip", "br", "deflate, identity", "x-anything"])
def test_a_body_sent_with_a_content_encoding_is_400_naming_the_header(
    api_client_for, owner, encoding
):
    plain = api_client_for(owner).post(
        "/api/v1/tools/memory_search",
        '{"query": "x"}',
        content_type="application/json",
        HTTP_CONTENT_ENCODING=encoding,
    )
    packed = api_client_for(owner).post(
        "/api/v1/tools/memory_search",
        gzip.compress(b'{"query": "x"}'),
        content_type="application/json",
        HTTP_CONTENT_ENCODING=encoding,
    )
    for response in (plain, packed):
        assert response.status_code == 400, response.content
        body = response.json()
        assert body["error"] == "invalid_input"
        assert list(body["fields"]) == ["Content-Encoding"]


@pytest.mark.django_db
@pytest.mark.parametrize("encoding", ["identity", "Identity", ""])
def test_a_body_sent_as_identity_is_read(api_client_for, owner, encoding):
    response = api_client_for(owner).post(
        "/api/v1/tools/memory_search",
        '{"query": "x"}',
        content_type="application/json",
        HTTP_CONTENT_ENCODING=encoding,
    )
    assert response.status_code == 200, response.content
