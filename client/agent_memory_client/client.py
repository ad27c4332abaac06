"""`MemoryClient` (one per agent process) and `Conversation` (one per conversation:
the runtime headers live here, set once)."""

from __future__ import annotations

import enum
import json
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, Final, overload

import httpx

from agent_memory_client.errors import ApiError, Conflict, RateLimited, error_for
from agent_memory_client.types import (
    CaptureResult,
    ContextResult,
    DeletionRequest,
    Document,
    DocumentList,
    Event,
    Proposal,
    SearchHit,
    Version,
    WriteResult,
)

DEFAULT_TIMEOUT = 30.0
# What a proxy answers while the server behind it restarts: the event stream
# reconnects after these as after a dropped connection.
RECONNECT_STATUSES: Final = frozenset({502, 503, 504})
RECONNECT_FIRST_WAIT = 1.0
RECONNECT_MAX_WAIT = 30.0


class Unset(enum.Enum):
    """The type of `UNSET`, the default of the tools' optional arguments."""

    UNSET = "UNSET"

    def __repr__(self) -> str:
        return "UNSET"


# An argument left out is not sent, so the server applies its default (or, in
# a patch, keeps the value); None is sent as null, which clears `expires_at`.
UNSET: Final = Unset.UNSET


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
                return _json(response)
            error = error_for(response.status_code, _body(response), _retry_after(response))
            self._sleep(self._retry_wait(error, attempt))
        raise AssertionError("unreachable")

    def _retry_wait(self, error: ApiError, retried: int) -> float:
        """How long to wait before sending again after `error`, having retried
        `retried` times already; raises `error` when it is not to be retried."""
        if (
            not isinstance(error, RateLimited)
            or retried >= self.max_retries
            or error.retry_after > self.max_retry_wait
        ):
            raise error
        return error.retry_after

    def events(
        self, *, after: int = 0, conversation: str = "", on_behalf_of: str = ""
    ) -> Iterator[Event]:
        """Follow the event stream forever, resuming after the last event seen
        (`Last-Event-ID`).

        A dropped connection, a server restart (which a proxy answers 502, 503
        or 504) and a stream that ends without an event are retried after a
        wait that doubles up to RECONNECT_MAX_WAIT, or the `Retry-After` if
        longer, and starts over once an event arrives: a server on its way
        back is not asked again and again. A stream that stayed open that
        long before ending is followed at once. A 429 is retried as a call's is;
        the count starts again once a stream opens. A success that is not an
        event stream (a proxy's page) raises `ApiError` `unexpected_answer`,
        since asking again would get the same page."""
        last = after
        backoff = _Backoff(RECONNECT_FIRST_WAIT, RECONNECT_MAX_WAIT)
        rate_limited = 0
        while True:
            try:
                with self._open_events(last, conversation, on_behalf_of) as response:
                    if response.status_code < 400:
                        _check_event_stream(response)
                        rate_limited = 0
                        opened = time.monotonic()
                        delivered = False
                        for event in _sse_events(response.iter_lines()):
                            last, delivered = event["id"], True
                            backoff.reset()
                            yield event
                        # A quiet stream the server ends at its lifetime's end
                        # was healthy: follow it at once. One that ends at once
                        # is a server on its way down.
                        if delivered or time.monotonic() - opened >= RECONNECT_MAX_WAIT:
                            backoff.reset()
                            continue
                        wait = backoff.next()
                    elif response.status_code in RECONNECT_STATUSES:
                        response.read()
                        wait = max(backoff.next(), _retry_after(response))
                    else:
                        response.read()
                        error = error_for(
                            response.status_code, _body(response), _retry_after(response)
                        )
                        wait = self._retry_wait(error, rate_limited)
                        rate_limited += 1
            except httpx.TransportError:
                wait = backoff.next()
            # Waited for with the answer closed, so its connection is free meanwhile.
            self._sleep(wait)

    def _open_events(
        self, last: int, conversation: str, on_behalf_of: str
    ) -> AbstractContextManager[httpx.Response]:
        headers = {**self._auth, "Accept": "text/event-stream", "Last-Event-ID": str(last)}
        if on_behalf_of:
            headers["X-Memory-On-Behalf-Of"] = on_behalf_of
        return self._http.stream(
            "GET",
            f"{self.base_url}/api/v1/events/stream",
            headers=headers,
            params={"conversation": conversation} if conversation else {},
            timeout=httpx.Timeout(DEFAULT_TIMEOUT, read=60.0),
        )


class _Backoff:
    """Waits that double from `first` up to `cap`, and start over on `reset`."""

    def __init__(self, first: float, cap: float) -> None:
        self.first = first
        self.cap = cap
        self._wait = first

    def next(self) -> float:
        wait = self._wait
        self._wait = min(wait * 2, self.cap)
        return wait

    def reset(self) -> None:
        self._wait = self.first


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
        """Any tool by name; arguments that are `UNSET` are left out, None is null."""
        sent = {name: value for name, value in arguments.items() if value is not UNSET}
        return self.client.call(tool, sent, self.headers)

    def context(
        self,
        message: str,
        *,
        max_docs: int | Unset = UNSET,
        token_budget: int | Unset | None = UNSET,
    ) -> ContextResult:
        return self.call(
            "memory_context", message=message, max_docs=max_docs, token_budget=token_budget
        )

    def search(
        self,
        query: str,
        *,
        limit: int | Unset = UNSET,
        stores: list[str] | Unset | None = UNSET,
        doc_types: list[str] | Unset | None = UNSET,
        tags: list[str] | Unset | None = UNSET,
        include_drafts: bool | Unset = UNSET,
        mode: str | Unset = UNSET,
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
        id: str | Unset = UNSET,
        *,
        store: str | Unset = UNSET,
        path: str | Unset = UNSET,
        version: int | Unset | None = UNSET,
    ) -> Document:
        return self.call("memory_read", id=id, store=store, path=path, version=version)

    def list_documents(
        self,
        store: str,
        *,
        prefix: str | Unset = UNSET,
        cursor: str | Unset | None = UNSET,
        limit: int | Unset = UNSET,
        include_inactive: bool | Unset = UNSET,
    ) -> DocumentList:
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
        id: str | Unset = UNSET,
        *,
        store: str | Unset = UNSET,
        path: str | Unset = UNSET,
        limit: int | Unset = UNSET,
    ) -> list[Version]:
        return self.call("memory_history", id=id, store=store, path=path, limit=limit)["versions"]

    def remember(
        self,
        *,
        content: str,
        title: str | Unset = UNSET,
        store: str = "conversation",
        path: str | Unset | None = UNSET,
        doc_type: str | Unset = UNSET,
        recall_hint: str | Unset = UNSET,
        tags: list[str] | Unset = UNSET,
        entities: dict[str, str | None] | Unset = UNSET,
        always_inject: bool | Unset = UNSET,
        importance: int | Unset = UNSET,
        expires_at: str | Unset | None = UNSET,
        source_refs: list[dict[str, str]] | Unset = UNSET,
    ) -> WriteResult:
        """Without a `path` the server derives one from the title, and without a
        title one from the content. Rewriting a document, the arguments left out
        keep its values; `expires_at=None` means it never expires."""
        return self.call(
            "memory_remember",
            store=store,
            path=path,
            title=title,
            content=content,
            doc_type=doc_type,
            recall_hint=recall_hint,
            tags=tags,
            entities=entities,
            always_inject=always_inject,
            importance=importance,
            expires_at=expires_at,
            source_refs=source_refs,
        )

    def patch(
        self,
        id: str | Unset = UNSET,
        *,
        store: str | Unset = UNSET,
        path: str | Unset = UNSET,
        expected_sha256: str,
        content: str | Unset = UNSET,
        edits: list[dict[str, str]] | Unset = UNSET,
        title: str | Unset = UNSET,
        recall_hint: str | Unset = UNSET,
        tags: list[str] | Unset = UNSET,
        entities: dict[str, str | None] | Unset = UNSET,
        importance: int | Unset = UNSET,
        expires_at: str | Unset | None = UNSET,
        source_refs: list[dict[str, str]] | Unset = UNSET,
    ) -> WriteResult:
        """One patch: `content` or `edits`, and any metadata to replace (what is
        left out is kept; `expires_at=None` removes the expiry). A stale sha
        raises `Conflict` (see `update` for the retry)."""
        return self.call(
            "memory_patch",
            id=id,
            store=store,
            path=path,
            expected_sha256=expected_sha256,
            content=content,
            edits=edits,
            title=title,
            recall_hint=recall_hint,
            tags=tags,
            entities=entities,
            importance=importance,
            expires_at=expires_at,
            source_refs=source_refs,
        )

    @overload
    def update(
        self, id: str, change: Callable[[str], str], *, attempts: int = 3
    ) -> WriteResult: ...

    @overload
    def update(
        self, *, store: str, path: str, change: Callable[[str], str], attempts: int = 3
    ) -> WriteResult: ...

    def update(
        self,
        id: str | Unset = UNSET,
        change: Callable[[str], str] | None = None,
        *,
        store: str | Unset = UNSET,
        path: str | Unset = UNSET,
        attempts: int = 3,
    ) -> WriteResult:
        """Read the document (by `id`, or by `store` and `path`), apply `change`
        to the content, patch; on 409 read again and re-apply to the newer
        content, up to `attempts` times."""
        if change is None:
            raise TypeError("update() needs the change: a function of the content")
        for attempt in range(attempts):
            document = self.read(id, store=store, path=path)
            try:
                # By the id read: the patch applies to the document the change saw.
                return self.patch(
                    document["id"],
                    expected_sha256=document["sha256"],
                    content=change(document["content"]),
                )
            except Conflict:
                if attempt == attempts - 1:
                    raise
        raise AssertionError("unreachable")

    def mark_used(self, ids: list[str]) -> int:
        return self.call("memory_mark_used", ids=ids)["updated"]

    def propose_promotion(
        self,
        id: str | Unset = UNSET,
        *,
        store: str | Unset = UNSET,
        path: str | Unset = UNSET,
        target_store: str,
        rationale: str,
        target_path: str | Unset | None = UNSET,
    ) -> Proposal:
        return self.call(
            "memory_propose_promotion",
            id=id,
            store=store,
            path=path,
            target_store=target_store,
            rationale=rationale,
            target_path=target_path,
        )

    def delete(
        self,
        id: str | Unset = UNSET,
        *,
        store: str | Unset = UNSET,
        path: str | Unset = UNSET,
        reason: str | Unset = UNSET,
    ) -> DeletionRequest:
        """Asks for the deletion, which a human confirms; `reason` is shown to them."""
        return self.call("memory_delete", id=id, store=store, path=path, reason=reason)

    def capture(
        self,
        transcript: str | Unset | None = UNSET,
        *,
        messages: list[dict[str, str]] | Unset | None = UNSET,
        run_id: str | Unset = UNSET,
        source_refs: list[dict[str, str]] | Unset = UNSET,
    ) -> CaptureResult:
        """A run's transcript (text, or `messages` as role/content pairs) made
        into conversation drafts: `{"kept": [...], "skipped": [...]}`."""
        return self.call(
            "memory_capture",
            transcript=transcript,
            messages=messages,
            run_id=run_id,
            source_refs=source_refs,
        )


def _json(response: httpx.Response) -> Any:
    """A successful answer's JSON; anything else (a proxy's page, say) is an `ApiError`."""
    try:
        return response.json()
    except ValueError as error:
        raise _unexpected(response, "JSON") from error


def _check_event_stream(response: httpx.Response) -> None:
    """Refuses a successful answer that is not an event stream (a proxy's
    sign-in page, say): it holds no events, and the same request would only
    get it again."""
    content_type = response.headers.get("Content-Type", "")
    if content_type.partition(";")[0].strip().lower() != "text/event-stream":
        response.read()
        raise _unexpected(response, "an event stream")


def _unexpected(response: httpx.Response, expected: str) -> ApiError:
    detail = f"The answer is not {expected}: {response.text[:200]!r}"
    return ApiError(response.status_code, {"error": "unexpected_answer", "detail": detail})


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
    if moment.tzinfo is None:
        # The asctime form and a "-0000" zone carry no offset; HTTP dates are in UTC.
        moment = moment.replace(tzinfo=UTC)
    return max(0.0, (moment - datetime.now(UTC)).total_seconds())


def _sse_events(lines: Iterator[str]) -> Iterator[Event]:
    data: list[str] = []
    for line in lines:
        if line.startswith("data:"):
            data.append(line[5:].lstrip())
        elif not line and data:
            yield json.loads("\n".join(data))
            data = []
