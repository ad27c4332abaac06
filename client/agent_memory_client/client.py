"""`MemoryClient` (one per agent process) and `Conversation` (one per conversation:
the runtime headers live here, set once)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from agent_memory_client.errors import Conflict, RateLimited, error_for
from agent_memory_client.types import (
    ContextResult,
    Document,
    Event,
    Proposal,
    SearchHit,
    WriteResult,
)

DEFAULT_TIMEOUT = 30.0


class MemoryClient:
    """Talks to one server with one API key.

    A 429 is retried after its `Retry-After`, at most `max_retries` times;
    `RateLimited` is raised after that, or at once when the wait is longer than
    `max_retry_wait` seconds (a run's write cap answers an hour: no point waiting).
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        max_retries: int = 3,
        max_retry_wait: float = 30.0,
        timeout: float = DEFAULT_TIMEOUT,
        http: httpx.Client | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.max_retries = max_retries
        self.max_retry_wait = max_retry_wait
        # A client passed in stays the caller's: the key goes on each request,
        # not into its headers, and closing this one leaves it open.
        self._owns_http = http is None
        self._http = http or httpx.Client(timeout=timeout)
        self._auth = {"Authorization": f"Token {api_key}"}
        self._sleep: Callable[[float], None] = time.sleep

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> MemoryClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def conversation(
        self, conversation_id: str, *, run: str = "", on_behalf_of: str = ""
    ) -> Conversation:
        return Conversation(self, conversation_id, run=run, on_behalf_of=on_behalf_of)

    def tools(self, *, include_write_tools: bool = True) -> list[dict[str, Any]]:
        """The tool definitions to hand to a model (names, descriptions, JSON Schemas)."""
        params = {"include_write_tools": "true"} if include_write_tools else {}
        return self._send("GET", "/api/v1/tools", params=params)["tools"]

    def call(self, tool: str, arguments: dict[str, Any], headers: dict[str, str] | None = None):
        """Any tool by name (also tools newer than this library)."""
        return self._send("POST", f"/api/v1/tools/{tool}", json=arguments, headers=headers)

    def _send(
        self, method: str, path: str, headers: dict[str, str] | None = None, **kwargs: Any
    ) -> Any:
        headers = {**self._auth, **(headers or {})}
        for attempt in range(self.max_retries + 1):
            response = self._http.request(method, self.base_url + path, headers=headers, **kwargs)
            if response.status_code < 400:
                return response.json()
            error = error_for(response.status_code, _body(response), _retry_after(response))
            if (
                not isinstance(error, RateLimited)
                or attempt == self.max_retries
                or error.retry_after > self.max_retry_wait
            ):
                raise error
            self._sleep(error.retry_after)
        raise AssertionError("unreachable")

    def events(self, *, after: int = 0, conversation: str = "") -> Iterator[Event]:
        """Follow the event stream forever; a dropped connection or a server
        restart resumes after the last event seen (`Last-Event-ID`)."""
        last = after
        params = {"conversation": conversation} if conversation else {}
        while True:
            headers = {**self._auth, "Accept": "text/event-stream", "Last-Event-ID": str(last)}
            try:
                with self._http.stream(
                    "GET",
                    f"{self.base_url}/api/v1/events/stream",
                    headers=headers,
                    params=params,
                    timeout=httpx.Timeout(DEFAULT_TIMEOUT, read=60.0),
                ) as response:
                    if response.status_code >= 400:
                        response.read()
                        raise error_for(response.status_code, _body(response), 0)
                    for event in _sse_events(response.iter_lines()):
                        last = event["id"]
                        yield event
            except httpx.TransportError:
                self._sleep(1.0)


@dataclass(frozen=True)
class Conversation:
    """The tools, called with this conversation's runtime headers."""

    client: MemoryClient
    conversation_id: str
    run: str = ""
    on_behalf_of: str = ""

    def next_run(self, run: str) -> Conversation:
        """The same conversation for the next turn."""
        return replace(self, run=run)

    @property
    def headers(self) -> dict[str, str]:
        headers = {"X-Memory-Conversation": self.conversation_id}
        if self.run:
            headers["X-Memory-Run"] = self.run
        if self.on_behalf_of:
            headers["X-Memory-On-Behalf-Of"] = self.on_behalf_of
        return headers

    def call(self, tool: str, **arguments: Any) -> Any:
        present = {name: value for name, value in arguments.items() if value is not None}
        return self.client.call(tool, present, self.headers)

    def context(
        self, message: str, *, max_docs: int | None = None, token_budget: int | None = None
    ) -> ContextResult:
        return self.call(
            "memory_context", message=message, max_docs=max_docs, token_budget=token_budget
        )

    def search(
        self,
        query: str,
        *,
        limit: int | None = None,
        stores: list[str] | None = None,
        doc_types: list[str] | None = None,
        tags: list[str] | None = None,
        include_drafts: bool | None = None,
        mode: str | None = None,
    ) -> list[SearchHit]:
        """`mode`: "hybrid" (the server's default), "text" or "semantic"."""
        return self.call(
            "memory_search",
            query=query,
            limit=limit,
            stores=stores,
            doc_types=doc_types,
            tags=tags,
            include_drafts=include_drafts,
            mode=mode,
        )["results"]

    def read(
        self,
        id: str | None = None,
        *,
        store: str | None = None,
        path: str | None = None,
        version: int | None = None,
    ) -> Document:
        return self.call("memory_read", id=id, store=store, path=path, version=version)

    def list_documents(
        self,
        store: str,
        *,
        prefix: str | None = None,
        cursor: str | None = None,
        limit: int | None = None,
        include_inactive: bool | None = None,
    ) -> dict[str, Any]:
        return self.call(
            "memory_list",
            store=store,
            prefix=prefix,
            cursor=cursor,
            limit=limit,
            include_inactive=include_inactive,
        )

    def history(
        self,
        id: str | None = None,
        *,
        store: str | None = None,
        path: str | None = None,
        limit: int | None = None,
    ) -> list[dict[str, Any]]:
        return self.call("memory_history", id=id, store=store, path=path, limit=limit)["versions"]

    def remember(
        self, *, title: str, content: str, store: str = "conversation", **fields: Any
    ) -> WriteResult:
        return self.call("memory_remember", store=store, title=title, content=content, **fields)

    def patch(self, id: str, *, expected_sha256: str, **change: Any) -> WriteResult:
        """One patch; a stale sha raises `Conflict` (see `update` for the retry)."""
        return self.call("memory_patch", id=id, expected_sha256=expected_sha256, **change)

    def update(self, id: str, change: Callable[[str], str], *, attempts: int = 3) -> WriteResult:
        """Read, apply `change` to the content, patch; on 409 read again and
        re-apply to the newer content, up to `attempts` times."""
        for attempt in range(attempts):
            document = self.read(id)
            try:
                return self.patch(
                    id, expected_sha256=document["sha256"], content=change(document["content"])
                )
            except Conflict:
                if attempt == attempts - 1:
                    raise
        raise AssertionError("unreachable")

    def mark_used(self, ids: list[str]) -> int:
        return self.call("memory_mark_used", ids=ids)["updated"]

    def propose_promotion(
        self, id: str, *, target_store: str, rationale: str, target_path: str | None = None
    ) -> Proposal:
        return self.call(
            "memory_propose_promotion",
            id=id,
            target_store=target_store,
            rationale=rationale,
            target_path=target_path,
        )

    def delete(self, id: str) -> dict[str, Any]:
        return self.call("memory_delete", id=id)

    def capture(
        self,
        transcript: str | None = None,
        *,
        messages: list[dict[str, str]] | None = None,
        run_id: str | None = None,
        source_refs: list[dict[str, str]] | None = None,
    ) -> dict[str, Any]:
        """A run's transcript (text, or `messages` as role/content pairs) made
        into conversation drafts: `{"kept": [...], "skipped": [...]}`."""
        return self.call(
            "memory_capture",
            transcript=transcript,
            messages=messages,
            run_id=run_id,
            source_refs=source_refs,
        )


def _body(response: httpx.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {"error": "error", "detail": response.text[:200]}
    return body if isinstance(body, dict) else {"error": "error", "detail": str(body)[:200]}


def _retry_after(response: httpx.Response) -> float:
    """Seconds to wait: `Retry-After` as seconds or as an HTTP date (RFC 9110)."""
    value = response.headers.get("Retry-After", "1")
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return 1.0
    return max(0.0, (moment - datetime.now(UTC)).total_seconds())


def _sse_events(lines: Iterator[str]) -> Iterator[Event]:
    data: list[str] = []
    for line in lines:
        if line.startswith("data:"):
            data.append(line[5:].lstrip())
        elif not line and data:
            yield json.loads("\n".join(data))
            data = []
