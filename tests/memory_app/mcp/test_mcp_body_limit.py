"""An MCP request body is held to MEMORY_MAX_BODY_BYTES, as a REST body is:
the whole message, wherever its bulk sits, refused with the API's
too_large before the protocol reads it; and a body under a raised limit
passes however large, the MCP SDK's own limit never answering first."""

import json

import httpx
import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR

from memory_app.models import MemoryDocument
from tests.aio import run
from tests.live_asgi import LiveAsgiServer
from tests.memory_app.api.conftest import remember_body
from tests.memory_app.mcp.conftest import connected, conversation_headers

pytestmark = pytest.mark.django_db(transaction=True)

LIMIT = 64 * 1024
SDK_DEFAULT = 4 * 1024 * 1024


def call_refused(url: str, key: str, name: str, arguments: dict, **options) -> MCPError:
    """The error of a tool call the transport refuses (`options`: call_tool's)."""

    async def scenario():
        async with connected(url, key, **conversation_headers()) as client:
            try:
                result = await client.call_tool(name, arguments, **options)
            except MCPError as error:
                after = await client.call_tool("memory_search", {"query": "x"})
                assert not after.is_error, after
                return error
        raise AssertionError(f"not refused: {result}")

    return run(scenario())


def call(url: str, key: str, name: str, arguments: dict, **options):
    async def scenario():
        async with connected(url, key, **conversation_headers()) as client:
            return await client.call_tool(name, arguments, **options)

    return run(scenario())


def over_rest(url: str, key: str, name: str, arguments: dict) -> httpx.Response:
    return httpx.post(
        f"{url}/api/v1/tools/{name}",
        json=arguments,
        headers={"Authorization": f"Token {key}", **conversation_headers()},
        timeout=60,
    )


def too_large(limit: int) -> dict:
    return {
        "error": "too_large",
        "detail": f"The request body is over the size limit of {limit} bytes.",
        "status": 413,
    }


def test_a_body_over_the_limit_is_too_large_as_over_rest(asgi_server, agent_key, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = LIMIT
    arguments = remember_body(content="y" * LIMIT)
    refused = call_refused(asgi_server.url, agent_key, "memory_remember", arguments)
    rest = over_rest(asgi_server.url, agent_key, "memory_remember", arguments)
    assert rest.status_code == 413
    assert refused.data == {**rest.json(), "status": 413} == too_large(LIMIT)
    assert str(refused) == rest.json()["detail"]
    assert refused.code == INTERNAL_ERROR  # as a prompt's refusal other than a 400
    assert not MemoryDocument.objects.exclude(store__scope="workspace").exists()


def test_a_body_past_the_sdk_s_own_limit_is_too_large_not_an_opaque_error(
    asgi_server, agent_key, settings
):
    """Over 4 MiB the MCP SDK answered a plain-text 413 of its own, which its
    client turned into an internal error without the API's code."""
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    assert limit < SDK_DEFAULT
    arguments = {"transcript": "z" * (SDK_DEFAULT + 1024)}
    refused = call_refused(asgi_server.url, agent_key, "memory_capture", arguments)
    assert refused.data == too_large(limit)


def test_bulk_outside_the_arguments_counts_toward_the_limit(asgi_server, agent_key, settings):
    """The tool's view sees its arguments only; the whole message is what the
    server receives, and what the limit is for."""
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = LIMIT
    meta = {"bulk": "m" * LIMIT}
    refused = call_refused(asgi_server.url, agent_key, "memory_search", {"query": "x"}, meta=meta)
    assert refused.data == too_large(LIMIT)


def test_a_body_sent_in_chunks_is_measured_as_it_arrives(asgi_server, agent_key, settings):
    """No Content-Length to go by: the body is counted while it is received,
    and the answer is the JSON-RPC error the SDK's client reads at any status."""
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = LIMIT
    message = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "memory_search", "arguments": {"query": "q" * LIMIT}},
    }
    encoded = json.dumps(message).encode()

    def chunks():
        for start in range(0, len(encoded), 4096):
            yield encoded[start : start + 4096]

    response = httpx.post(
        f"{asgi_server.url}/mcp",
        content=chunks(),
        headers={
            "Authorization": f"Token {agent_key}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "X-Request-ID": "body-limit-1",
        },
    )
    assert response.status_code == 413
    assert response.headers["content-type"] == "application/json"
    assert response.headers["x-request-id"] == "body-limit-1"
    assert response.headers["cache-control"]
    answer = response.json()
    assert (answer["jsonrpc"], answer["id"]) == ("2.0", None)
    assert answer["error"]["data"] == too_large(LIMIT)


@pytest.fixture
def roomy_server(settings, transactional_db):
    """A server started with MEMORY_MAX_BODY_BYTES at 8 MiB, twice the SDK's default."""
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2 * SDK_DEFAULT
    server = LiveAsgiServer()
    server.start()
    yield server
    server.stop()


def test_a_raised_limit_governs_past_the_sdk_s_default(roomy_server, agent_key, settings):
    settings.MEMORY_CAPTURE_MAX_CHARS = 6_000_000
    arguments = {"transcript": "The deploy went fine and nothing was learned. " * 110_000}
    assert SDK_DEFAULT < len(json.dumps(arguments)) < settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    result = call(roomy_server.url, agent_key, "memory_capture", arguments)
    assert not result.is_error, result
    assert (
        result.structured_content
        == over_rest(roomy_server.url, agent_key, "memory_capture", arguments).json()
    )
    meta = {"bulk": "m" * SDK_DEFAULT}
    assert not call(
        roomy_server.url, agent_key, "memory_search", {"query": "x"}, meta=meta
    ).is_error


def test_a_message_within_the_limit_is_answered_as_rest_answers_its_arguments(
    asgi_server, agent_key, settings
):
    """Arguments within the limit as sent are not pushed over it by the
    tool's view reading them again."""
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = LIMIT
    arguments = {"query": "x", "tags": ["a"] * 14_000}
    compact = json.dumps(arguments, separators=(",", ":"))
    assert len(compact) < LIMIT - 200 < LIMIT < len(json.dumps(arguments))
    result = call(asgi_server.url, agent_key, "memory_search", arguments)
    rest = httpx.post(
        f"{asgi_server.url}/api/v1/tools/memory_search",
        content=compact,
        headers={"Authorization": f"Token {agent_key}", "Content-Type": "application/json"},
    )
    assert rest.status_code == 400
    assert result.structured_content == {**rest.json(), "status": rest.status_code}
