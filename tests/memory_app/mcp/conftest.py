"""An MCP session with the official client over a real HTTP connection."""

import contextlib

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from memory_app.services.principals import api_key_issue
from tests.factories import UserFactory


@pytest.fixture
def agent_key(transactional_db):
    agent = UserFactory(username="agent", service_account=True)
    return api_key_issue(user=agent).raw


@contextlib.asynccontextmanager
async def connected(url: str, key: str, *, write_tools: bool | str = True, **headers):
    """`write_tools` as a string is sent as include_write_tools as it is."""
    if isinstance(write_tools, str):
        query = f"?include_write_tools={write_tools}"
    else:
        query = "?include_write_tools=true" if write_tools else ""
    runtime = {"Authorization": f"Bearer {key}", **headers}
    async with httpx2.AsyncClient(headers=runtime, timeout=30) as http:
        transport = streamable_http_client(f"{url}/mcp{query}", http_client=http)
        async with Client(transport) as client:
            yield client


def conversation_headers(name="conv-mcp", run_id="run-1"):
    return {"X-Memory-Conversation": name, "X-Memory-Run": run_id}
