"""The MCP endpoint, driven by the official MCP client over a real HTTP connection."""

from urllib.parse import quote

import httpx
import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS
from prometheus_client.parser import text_string_to_metric_families

from memory_app.api.manifest import tool_definitions
from memory_app.models import MemoryDocument
from tests.aio import run
from tests.factories import UserFactory
from tests.memory_app.api.conftest import remember_body
from tests.memory_app.mcp.conftest import connected, conversation_headers

pytestmark = pytest.mark.django_db(transaction=True)

CONTEXT = "memory_context"
SECRET = "ghp_" + "Zq8rT2mK9vXw4LpA7sBn3cDe6fGh1jKl5mNo"


def test_it_lists_the_manifest_read_tools_by_default(asgi_server, agent_key):
    async def scenario():
        async with connected(asgi_server.url, agent_key, write_tools=False) as client:
            return (await client.list_tools()).tools

    listed = {tool.name: tool for tool in run(scenario())}
    expected = {tool["name"]: tool for tool in tool_definitions() if not tool["write"]}
    assert set(listed) == set(expected)
    for name, tool in listed.items():
        assert tool.description == expected[name]["description"]
        assert tool.input_schema == expected[name]["input_schema"]
        assert tool.annotations.read_only_hint is True


def test_write_tools_are_listed_when_asked_like_the_manifest(asgi_server, agent_key):
    async def scenario():
        async with connected(asgi_server.url, agent_key) as client:
            return (await client.list_tools()).tools

    listed = {tool.name: tool for tool in run(scenario())}
    assert set(listed) == {tool["name"] for tool in tool_definitions()}
    assert listed["memory_remember"].annotations.read_only_hint is False


def _listed(url: str, key: str, value: str) -> set[str] | MCPError:
    """The tools listed with this include_write_tools, or the listing's error."""

    async def scenario():
        async with connected(url, key, write_tools=value) as client:
            try:
                return {tool.name for tool in (await client.list_tools()).tools}
            except MCPError as error:
                return error

    return run(scenario())


@pytest.mark.parametrize(("value", "writes"), [("TRUE", True), ("False", False)])
def test_include_write_tools_reads_as_in_the_manifest(asgi_server, agent_key, value, writes):
    expected = {tool["name"] for tool in tool_definitions() if writes or not tool["write"]}
    assert _listed(asgi_server.url, agent_key, value) == expected


@pytest.mark.parametrize("value", ["1", "yes"])
def test_an_include_write_tools_the_manifest_refuses_fails_the_listing(
    asgi_server, agent_key, value
):
    refused = _listed(asgi_server.url, agent_key, value)
    assert isinstance(refused, MCPError)
    assert refused.error.code == INVALID_PARAMS
    assert "include_write_tools" in refused.error.message


def test_every_tool_round_trips_with_the_runtime_headers(asgi_server, agent_key):
    async def scenario():
        async with connected(asgi_server.url, agent_key, **conversation_headers()) as client:
            results = {}
            created = await client.call_tool("memory_remember", remember_body())
            results["memory_remember"] = created
            ref = {"id": created.structured_content["id"]}
            read = await client.call_tool("memory_read", ref)
            results["memory_read"] = read
            results["memory_list"] = await client.call_tool(
                "memory_list", {"store": "conversation"}
            )
            results["memory_history"] = await client.call_tool("memory_history", ref)
            results["memory_search"] = await client.call_tool(
                "memory_search", {"query": "nginx crash loop"}
            )
            results["memory_context"] = await client.call_tool(
                "memory_context", {"message": "nginx ingress pods crash after reload"}
            )
            results["memory_mark_used"] = await client.call_tool(
                "memory_mark_used", {"ids": [ref["id"]]}
            )
            results["memory_patch"] = await client.call_tool(
                "memory_patch",
                {
                    **ref,
                    "expected_sha256": read.structured_content["sha256"],
                    "edits": [{"old": "rolling back", "new": "reverting"}],
                },
            )
            results["memory_propose_promotion"] = await client.call_tool(
                "memory_propose_promotion",
                {**ref, "target_store": "workspace_runbooks", "rationale": "Seen twice."},
            )
            results["memory_delete"] = await client.call_tool("memory_delete", ref)
            results["memory_capture"] = await client.call_tool(
                "memory_capture", {"transcript": "Root cause: the DNS cache was stale."}
            )
            return results

    results = run(scenario())
    assert set(results) == {tool["name"] for tool in tool_definitions()}
    assert not any(result.is_error for result in results.values()), results
    document = MemoryDocument.objects.get(pk=results["memory_remember"].structured_content["id"])
    assert document.store.conversation.external_id == "conv-mcp"
    assert results["memory_read"].structured_content["title"] == remember_body()["title"]
    assert [d["id"] for d in results["memory_list"].structured_content["documents"]] == [
        str(document.pk)
    ]
    assert results["memory_search"].structured_content["results"][0]["id"] == str(document.pk)
    context = results["memory_context"].structured_content
    assert str(document.pk) in [d["id"] for d in context["documents"]]
    assert results["memory_mark_used"].structured_content == {"updated": 1}
    assert results["memory_patch"].structured_content["outcome"] == "updated"
    assert results["memory_propose_promotion"].structured_content["status"] == "awaiting_review"
    assert results["memory_delete"].structured_content["status"] == "pending_confirmation"
    assert results["memory_history"].structured_content["versions"][0]["version"] == 1
    [captured] = results["memory_capture"].structured_content["kept"]
    assert captured["kind"] == "incident"


def test_a_tool_error_carries_the_api_code_detail_and_status(asgi_server, agent_key):
    async def scenario():
        async with connected(asgi_server.url, agent_key, **conversation_headers()) as client:
            created = await client.call_tool("memory_remember", remember_body())
            stale = await client.call_tool(
                "memory_patch",
                {
                    "id": created.structured_content["id"],
                    "expected_sha256": "0" * 64,
                    "content": "x",
                },
            )
            invalid = await client.call_tool("memory_search", {"query": ""})
            blocked = await client.call_tool(
                "memory_remember", remember_body(content=f"use token {SECRET} to push")
            )
            missing = await client.call_tool(
                "memory_read", {"id": "00000000-0000-0000-0000-000000000000"}
            )
            unknown = await client.call_tool("memory_nothing", {})
            return stale, invalid, blocked, missing, unknown

    stale, invalid, blocked, missing, unknown = run(scenario())
    assert stale.is_error and stale.structured_content["error"] == "conflict"
    assert stale.structured_content["status"] == 409
    assert len(stale.structured_content["current_sha256"]) == 64
    assert invalid.is_error and invalid.structured_content["error"] == "invalid_input"
    assert "query" in invalid.structured_content["fields"]
    assert blocked.is_error and blocked.structured_content["error"] == "write_blocked"
    assert blocked.structured_content["findings"][0]["detector"] == "github_token"
    assert SECRET not in blocked.content[0].text
    assert missing.structured_content["error"] == "not_found"
    assert missing.structured_content["status"] == 404
    assert unknown.is_error and unknown.structured_content["error"] == "not_found"


def test_acting_on_behalf_without_the_permission_is_refused(asgi_server, agent_key):
    UserFactory(username="alice")

    async def scenario():
        async with connected(
            asgi_server.url, agent_key, **{"X-Memory-On-Behalf-Of": "alice"}
        ) as client:
            return await client.call_tool("memory_search", {"query": "anything"})

    result = run(scenario())
    assert result.is_error
    assert result.structured_content["error"] == "permission_denied"
    assert result.structured_content["status"] == 403


@pytest.mark.parametrize("authorization", [None, "Token ama_not-a-key", "Basic abc"])
def test_a_missing_or_bad_key_gets_401_before_the_protocol(asgi_server, authorization):
    headers = {"Accept": "application/json, text/event-stream"}
    if authorization:
        headers["Authorization"] = authorization
    response = httpx.post(
        f"{asgi_server.url}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
        headers=headers,
    )
    assert response.status_code == 401
    assert response.json()["error"] == "not_authenticated"
    assert response.headers["WWW-Authenticate"] == 'Token realm="api"'


@pytest.mark.parametrize("authorized", [True, False])
def test_answers_carry_the_request_id_and_the_guarding_headers(asgi_server, agent_key, authorized):
    headers = {"Accept": "application/json, text/event-stream", "X-Request-ID": "trace-42"}
    if authorized:
        headers["Authorization"] = f"Bearer {agent_key}"
    response = httpx.post(
        f"{asgi_server.url}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
        headers=headers,
    )
    assert response.status_code == (200 if authorized else 401)
    assert response.headers["X-Request-ID"] == "trace-42"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in response.headers["Content-Security-Policy"]
    assert "no-store" in response.headers["Cache-Control"]


def test_a_tool_call_is_logged_under_the_request_id_its_answer_carries(
    asgi_server, agent_key, caplog
):
    caplog.set_level("INFO", logger="memory_app.requests")
    response = httpx.post(
        f"{asgi_server.url}/mcp",
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "memory_search", "arguments": {"query": "nginx"}},
        },
        headers={
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {agent_key}",
        },
    )
    assert response.status_code == 200
    request_id = response.headers["X-Request-ID"]
    logged = {(r.getMessage(), r.request_id) for r in caplog.records if hasattr(r, "request_id")}
    assert ("MCP memory_search 200", request_id) in logged
    assert ("POST mcp 200", request_id) in logged


def test_a_get_of_the_endpoint_is_405_at_once_not_a_stream_that_never_speaks(
    asgi_server, agent_key
):
    response = httpx.get(
        f"{asgi_server.url}/mcp",
        headers={"Authorization": f"Bearer {agent_key}", "Accept": "text/event-stream"},
        timeout=5,
    )
    assert response.status_code == 405
    assert response.headers["Allow"] == "POST"
    assert response.json()["error"] == "method_not_allowed"


def test_the_official_client_fails_to_connect_without_a_key(asgi_server, transactional_db):
    async def scenario():
        async with connected(asgi_server.url, "ama_wrong") as client:
            await client.list_tools()

    with pytest.raises(ExceptionGroup) as raised:
        run(scenario())
    assert raised.group_contains(MCPError, match="error response")


def test_memory_context_is_also_a_prompt(asgi_server, agent_key):
    async def scenario():
        async with connected(asgi_server.url, agent_key, **conversation_headers()) as client:
            await client.call_tool("memory_remember", remember_body())
            prompts = (await client.list_prompts()).prompts
            prompt = await client.get_prompt(
                "memory_context", {"message": "nginx ingress crash after reload"}
            )
            return prompts, prompt

    prompts, prompt = run(scenario())
    assert [p.name for p in prompts] == ["memory_context"]
    assert "Nginx crash loop after config reload" in prompt.messages[0].content.text


def test_memory_context_is_also_a_resource_template(asgi_server, agent_key):
    message = quote("nginx ingress crash after reload")

    async def scenario():
        async with connected(asgi_server.url, agent_key, **conversation_headers()) as client:
            await client.call_tool("memory_remember", remember_body())
            listed = (await client.list_resources()).resources
            templates = (await client.list_resource_templates()).resource_templates
            read = await client.read_resource(f"memory://context?message={message}&max_docs=3")
            return listed, templates, read

    listed, templates, read = run(scenario())
    assert listed == []
    assert [(t.name, t.uri_template) for t in templates] == [
        ("memory_context", "memory://context{?message,max_docs,token_budget}")
    ]
    [contents] = read.contents
    assert contents.uri == f"memory://context?message={message}&max_docs=3"
    assert "Nginx crash loop after config reload" in contents.text


@pytest.mark.parametrize(
    ("uri", "code", "message"),
    [
        ("memory://context", "invalid_input", "The input is not valid."),
        ("memory://context?message=x&max_docs=99", "invalid_input", "The input is not valid."),
        ("memory://context?message=a%00b", "invalid_input", "message is not valid."),
        ("memory://context?message=x&max_docs=many", None, "max_docs must be an integer."),
        ("memory://elsewhere?message=x", None, "No resource at 'memory://elsewhere?message=x'."),
    ],
)
def test_a_context_resource_refused_carries_the_api_code(
    asgi_server, agent_key, uri, code, message
):
    async def scenario():
        async with connected(asgi_server.url, agent_key) as client:
            try:
                await client.read_resource(uri)
            except MCPError as refused:
                return refused.error
        return None

    error = run(scenario())
    assert error is not None and error.code == INVALID_PARAMS
    assert error.message == message
    if code is not None:
        assert error.data["error"] == code
        assert error.data["status"] == 400


def _refusals(url: str, key: str, **headers) -> tuple[dict, MCPError, MCPError]:
    """memory_context refused as a tool call, a resource read and a prompt."""

    async def refused(call) -> MCPError:
        try:
            await call
        except MCPError as error:
            return error
        raise AssertionError("not refused")

    async def scenario():
        async with connected(url, key, **headers) as client:
            tool = await client.call_tool(CONTEXT, {"message": "x"})
            assert tool.is_error
            resource = await refused(client.read_resource("memory://context?message=x"))
            prompt = await refused(client.get_prompt(CONTEXT, {"message": "x"}))
            return tool.structured_content, resource, prompt

    return run(scenario())


def test_a_context_prompt_or_resource_over_the_rate_says_when_to_retry(
    asgi_server, agent_key, settings
):
    settings.MEMORY_API_READ_RATE = "1/minute"
    search = httpx.post(
        f"{asgi_server.url}/api/v1/tools/memory_search",
        json={"query": "nginx"},
        headers={"Authorization": f"Token {agent_key}"},
    )
    assert search.status_code == 200
    tool, resource, prompt = _refusals(asgi_server.url, agent_key)
    assert (tool["error"], tool["status"]) == ("rate_limited", 429)
    for error in (resource, prompt):
        assert error.code == INTERNAL_ERROR
        assert error.message == tool["detail"]
        assert 1 <= error.data["retry_after"] <= 61
        assert {**error.data, "retry_after": tool["retry_after"]} == tool


def test_a_context_prompt_or_resource_refused_permission_is_no_parameter_error(
    asgi_server, agent_key
):
    UserFactory(username="alice")
    tool, resource, prompt = _refusals(
        asgi_server.url, agent_key, **{"X-Memory-On-Behalf-Of": "alice"}
    )
    assert (tool["error"], tool["status"]) == ("permission_denied", 403)
    for error in (resource, prompt):
        assert (error.code, error.message, error.data) == (INTERNAL_ERROR, tool["detail"], tool)


def test_the_context_prompt_takes_the_arguments_of_the_resource_template(asgi_server, agent_key):
    async def scenario():
        async with connected(asgi_server.url, agent_key, **conversation_headers()) as client:
            await client.call_tool("memory_remember", remember_body())
            [prompt] = (await client.list_prompts()).prompts
            [template] = (await client.list_resource_templates()).resource_templates
            arguments = {"message": "nginx ingress crash after reload"}
            full = await client.get_prompt(CONTEXT, arguments)
            cut = await client.get_prompt(CONTEXT, {**arguments, "token_budget": "40"})
            return prompt, template, full, cut

    prompt, template, full, cut = run(scenario())
    names = [argument.name for argument in prompt.arguments]
    assert names == ["message", "max_docs", "token_budget"]
    assert template.uri_template == f"memory://context{{?{','.join(names)}}}"
    assert len(cut.messages[0].content.text) < len(full.messages[0].content.text)


@pytest.mark.parametrize(
    "arguments",
    [
        remember_body(content="x" * 101),
        remember_body(store="workspace_runbooks", content="short"),
        remember_body(store="system:nothing", content="short"),
        {**remember_body(content="short"), "importance": 99},
    ],
    ids=["too_large", "workspace_by_promotion_only", "unknown_store", "out_of_range"],
)
def test_limits_and_policy_answer_as_over_rest(asgi_server, agent_key, settings, arguments):
    settings.MEMORY_MAX_CONTENT_CHARS = 100
    headers = conversation_headers()

    async def scenario():
        async with connected(asgi_server.url, agent_key, **headers) as client:
            return await client.call_tool("memory_remember", arguments)

    over_mcp = run(scenario())
    over_rest = httpx.post(
        f"{asgi_server.url}/api/v1/tools/memory_remember",
        json=arguments,
        headers={"Authorization": f"Token {agent_key}", **headers},
    )
    assert over_rest.status_code >= 400
    assert over_mcp.is_error
    assert over_mcp.structured_content == {**over_rest.json(), "status": over_rest.status_code}


def test_mcp_calls_are_counted_per_tool_and_transport(asgi_server, agent_key):
    def mcp_searches() -> float:
        text = httpx.get(f"{asgi_server.url}/metrics").text
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                labels = sample.labels
                if (
                    sample.name == "memory_tool_calls_total"
                    and labels.get("tool") == "memory_search"
                    and labels.get("transport") == "mcp"
                    and labels.get("status") == "200"
                ):
                    return sample.value
        return 0.0

    before = mcp_searches()

    async def scenario():
        async with connected(asgi_server.url, agent_key) as client:
            for _ in range(3):
                await client.call_tool("memory_search", {"query": "anything"})

    run(scenario())
    assert mcp_searches() - before == 3


def test_mcp_requests_are_counted_by_route_method_and_status(asgi_server, agent_key):
    def counted() -> dict:
        text = httpx.get(f"{asgi_server.url}/metrics").text
        found = {}
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.labels.get("route") == "mcp":
                    key = (sample.name, sample.labels.get("method"), sample.labels.get("status"))
                    found[key] = sample.value
        return found

    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    accept = {"Accept": "application/json, text/event-stream"}
    before = counted()
    httpx.post(f"{asgi_server.url}/mcp", json=listing, headers=accept)
    httpx.post(
        f"{asgi_server.url}/mcp",
        json=listing,
        headers={**accept, "Authorization": f"Bearer {agent_key}"},
    )
    httpx.request("PROPFIND", f"{asgi_server.url}/mcp", headers=accept)
    after = counted()

    def grew(*key) -> float:
        return after.get(key, 0.0) - before.get(key, 0.0)

    assert grew("memory_http_requests_total", "POST", "401") == 1
    assert grew("memory_http_requests_total", "POST", "200") == 1
    assert grew("memory_http_requests_total", "other", "401") == 1
    assert grew("memory_http_request_seconds_count", None, None) == 3
