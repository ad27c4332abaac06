"""GET /api/v1/events/stream over a real HTTP connection to the ASGI server."""

import contextlib
import json
import threading
import time

import httpx
import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone

from memory_app.api import stream
from memory_app.models import ApiKey, Conversation, MemoryEvent
from memory_app.services.principals import api_key_issue, principal_upsert
from memory_app.services.stores import store_for_conversation, store_for_user
from tests.factories import UserFactory, make_document
from tests.live_asgi import LiveAsgiServer

pytestmark = pytest.mark.django_db(transaction=True)


def read_events(
    url: str, key: str, count: int, last_event_id: int | None = None, headers=None, **params
):
    """Open the stream and return (id, data) of the first `count` events."""
    headers = {"Authorization": f"Token {key}", "Accept": "text/event-stream", **(headers or {})}
    if last_event_id is not None:
        headers["Last-Event-ID"] = str(last_event_id)
    seen, fields = [], {}
    with httpx.stream(
        "GET", f"{url}/api/v1/events/stream", headers=headers, params=params, timeout=10
    ) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if line:
                name, _, value = line.partition(": ")
                fields[name] = value
                continue
            if "id" in fields:
                seen.append((int(fields["id"]), json.loads(fields["data"])))
                if len(seen) == count:
                    return seen
            fields = {}
    return seen


@pytest.fixture
def alice(transactional_db):
    return UserFactory(username="alice")


@pytest.fixture
def alice_key(alice):
    return api_key_issue(user=alice).raw


def event(principal, kind="memory.test", **fields):
    return MemoryEvent.objects.create(type=kind, principal=principal, **fields)


def test_it_streams_visible_events_and_skips_others(asgi_server, alice, alice_key):
    bob = UserFactory(username="bob")
    shared = _shared_conversation(alice, bob)
    mine = event(alice)
    event(bob)
    # Bob's turn in the shared conversation, about his own store: not hers.
    event(bob, conversation=shared)
    event(bob, conversation=shared, document=make_document(store_for_user(user=bob)))
    in_shared_store = make_document(store_for_conversation(conversation=shared))
    theirs_shared = event(bob, conversation=shared, document=in_shared_store)
    got = read_events(asgi_server.url, alice_key, 2)
    assert [event_id for event_id, _ in got] == [mine.id, theirs_shared.id]
    assert got[0][1] == {
        "id": mine.id,
        "type": "memory.test",
        "created_at": mine.created_at.isoformat(),
        "payload": {},
    }


def _shared_conversation(*users):
    conversation = Conversation.objects.create(external_id="shared", created_by=users[0])
    conversation.participants.add(*users)
    return conversation


def test_it_delivers_events_written_while_connected(asgi_server, alice, alice_key):
    event(alice)
    late = []
    timer = threading.Timer(0.5, lambda: late.append(event(alice, "memory.late")))
    timer.start()
    got = read_events(asgi_server.url, alice_key, 2)
    timer.join()
    assert got[1][0] == late[0].id


def test_last_event_id_resumes_after_the_last_event_seen(asgi_server, alice, alice_key):
    first, second, third = event(alice), event(alice), event(alice)
    got = read_events(asgi_server.url, alice_key, 1, last_event_id=first.id)
    assert got[0][0] == second.id
    assert read_events(asgi_server.url, alice_key, 1, after=second.id)[0][0] == third.id


def test_it_resumes_across_a_server_restart_without_gap_or_duplicate(alice, alice_key):
    server = LiveAsgiServer()
    server.start()
    before = [event(alice) for _ in range(3)]
    try:
        got = read_events(server.url, alice_key, 3)
    finally:
        server.stop()
    during = [event(alice) for _ in range(2)]
    restarted = LiveAsgiServer(port=server.port)
    restarted.start()
    try:
        resumed = read_events(restarted.url, alice_key, 2, last_event_id=got[-1][0])
    finally:
        restarted.stop()
    ids = [event_id for event_id, _ in got + resumed]
    assert ids == [e.id for e in before + during]


def test_a_bad_cursor_or_unknown_conversation_is_a_json_error(asgi_server, alice_key):
    headers = {"Authorization": f"Token {alice_key}", "Accept": "text/event-stream"}
    url = f"{asgi_server.url}/api/v1/events/stream"
    bad = httpx.get(url, headers={**headers, "Last-Event-ID": "x"})
    assert bad.status_code == 400 and bad.json()["error"] == "invalid_input"
    missing = httpx.get(url, headers=headers, params={"conversation": "nope"})
    assert missing.status_code == 404 and missing.json()["error"] == "not_found"
    anonymous = httpx.get(url, headers={"Accept": "text/event-stream"})
    assert anonymous.status_code == 401 and anonymous.json()["error"] == "not_authenticated"


def test_on_behalf_of_streams_that_users_events_like_the_polling_endpoint(
    asgi_server, alice, alice_key
):
    bob = UserFactory(username="bob")
    assistant = principal_upsert(username="assistant", service_account=True, act_on_behalf=True)
    event(alice)
    bobs = event(bob)
    event(assistant)
    key = api_key_issue(user=assistant).raw
    behalf = {"X-Memory-On-Behalf-Of": "bob"}
    got = read_events(asgi_server.url, key, 1, headers=behalf)
    assert [event_id for event_id, _ in got] == [bobs.id]
    polled = httpx.get(
        f"{asgi_server.url}/api/v1/events", headers={"Authorization": f"Token {key}", **behalf}
    )
    assert [e["id"] for e in polled.json()["events"]] == [bobs.id]


@pytest.mark.parametrize(
    ("caller", "target", "detail"),
    [
        ("alice", "bob", "You may not act on behalf of other users."),
        ("assistant", "root", "Nobody acts on behalf of staff or superusers."),
    ],
)
def test_on_behalf_of_without_the_right_or_of_a_superuser_is_403(
    asgi_server, alice, caller, target, detail
):
    cast = {
        "alice": alice,
        "assistant": principal_upsert(
            username="assistant", service_account=True, act_on_behalf=True
        ),
    }
    UserFactory(username="bob")
    UserFactory(username="root", is_superuser=True)
    headers = {
        "Authorization": f"Token {api_key_issue(user=cast[caller]).raw}",
        "Accept": "text/event-stream",
        "X-Memory-On-Behalf-Of": target,
    }
    response = httpx.get(f"{asgi_server.url}/api/v1/events/stream", headers=headers)
    assert response.status_code == 403
    assert response.json() == {"error": "permission_denied", "detail": detail}


def test_a_wsgi_server_streams_the_same_frames(api_client_for, alice):
    mine = event(alice)
    response = api_client_for(alice).get("/api/v1/events/stream", HTTP_ACCEPT="text/event-stream")
    frames = iter(response.streaming_content)
    assert next(frames) == b"retry: 2000\n\n"
    assert next(frames).startswith(f"id: {mine.id}\ndata: ".encode())
    response.close()


def test_each_poll_of_the_stream_is_a_fixed_number_of_queries(
    api_client_for, alice, django_assert_max_num_queries
):
    from rest_framework.request import Request
    from rest_framework.test import APIRequestFactory

    from memory_app.api.stream import _next_page

    for _ in range(30):
        event(alice)
    request = Request(APIRequestFactory().get("/api/v1/events/stream", {"conversation": ""}))
    request.user = alice
    request.auth = api_key_issue(user=alice).key
    # The user, the key and whether the user's groups still allow reading
    # memory read again (each may have been taken away), whether the user
    # may decide reviews, the stores the user reads in conversations (as
    # ids, for the outbox's indexes), then the page.
    with django_assert_max_num_queries(8):
        assert len(_next_page(request, 0)) == 30


def test_a_quiet_stream_ends_once_its_key_is_revoked(asgi_server, alice, alice_key, monkeypatch):
    monkeypatch.setattr(stream, "KEEPALIVE_SECONDS", 0.5)
    monkeypatch.setattr(stream, "MAX_STREAM_SECONDS", 10.0)
    first = event(alice)
    timer = threading.Timer(
        0.5, lambda: ApiKey.objects.filter(user=alice).update(revoked_at=timezone.now())
    )
    timer.start()
    started = time.monotonic()
    got = read_events(asgi_server.url, alice_key, 2)
    timer.join()
    assert [event_id for event_id, _ in got] == [first.id]
    assert time.monotonic() - started < 5  # ended, not waiting out its lifetime


def test_a_stream_ends_once_its_key_is_revoked(asgi_server, alice, alice_key):
    first = event(alice)

    def revoke_then_write() -> None:
        ApiKey.objects.filter(user=alice).update(revoked_at=timezone.now())
        event(alice, "memory.after_revocation")

    timer = threading.Timer(0.5, revoke_then_write)
    timer.start()
    got = read_events(asgi_server.url, alice_key, 2)
    timer.join()
    assert [event_id for event_id, _ in got] == [first.id]


def test_open_streams_do_not_hold_a_database_connection_each(asgi_server, alice, alice_key):
    def connections() -> int:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            )
            return cursor.fetchone()[0]

    event(alice)
    read_events(asgi_server.url, alice_key, 1)  # warm the pool threads up
    before = connections()
    headers = {"Authorization": f"Token {alice_key}", "Accept": "text/event-stream"}
    with contextlib.ExitStack() as open_streams:
        for _ in range(12):
            response = open_streams.enter_context(
                httpx.stream("GET", f"{asgi_server.url}/api/v1/events/stream", headers=headers)
            )
            assert response.status_code == 200
        time.sleep(2.5)  # every stream has polled at least twice
        during = connections()
    assert during - before < 12 // 2


def _after_first_event(change, *later_events):
    """Run `change`, then write `later_events`, half a second into a stream."""

    def act() -> None:
        change()
        for make in later_events:
            make()

    return threading.Timer(0.5, act)


def test_a_stream_of_a_conversation_ends_cleanly_once_its_caller_leaves_it(
    asgi_server, alice, alice_key
):
    bob = UserFactory(username="bob")
    shared = _shared_conversation(alice, bob)
    document = make_document(store_for_conversation(conversation=shared))
    first = event(bob, conversation=shared, document=document)
    timer = _after_first_event(
        lambda: shared.participants.remove(alice),
        lambda: event(bob, "memory.after_leaving", conversation=shared, document=document),
    )
    timer.start()
    got = read_events(asgi_server.url, alice_key, 2, conversation="shared")
    timer.join()
    assert [event_id for event_id, _ in got] == [first.id]


def test_a_stream_on_behalf_of_a_user_ends_cleanly_once_the_user_is_deactivated(asgi_server, alice):
    assistant = principal_upsert(username="assistant", service_account=True, act_on_behalf=True)
    first = event(alice)
    timer = _after_first_event(
        lambda: type(alice).objects.filter(pk=alice.pk).update(is_active=False),
        lambda: event(alice, "memory.after_deactivation"),
    )
    timer.start()
    got = read_events(
        asgi_server.url,
        api_key_issue(user=assistant).raw,
        2,
        headers={"X-Memory-On-Behalf-Of": "alice"},
    )
    timer.join()
    assert [event_id for event_id, _ in got] == [first.id]


def test_a_session_stream_ends_once_the_password_changes(asgi_server, alice):
    browser = Client()
    browser.force_login(alice)
    first = event(alice)

    def change_password() -> None:
        alice.set_password("A-new-password-for-alice-42")
        alice.save()

    timer = _after_first_event(change_password, lambda: event(alice, "memory.after_change"))
    timer.start()
    got = []
    with httpx.stream(
        "GET",
        f"{asgi_server.url}/api/v1/events/stream",
        headers={"Accept": "text/event-stream"},
        cookies={"sessionid": browser.cookies["sessionid"].value},
        timeout=10,
    ) as response:
        assert response.status_code == 200
        got = [line for line in response.iter_lines() if line.startswith("id: ")]
    timer.join()
    assert got == [f"id: {first.id}"]


def test_head_answers_as_the_stream_would_without_opening_it(api_client_for, alice):
    client = api_client_for(alice)
    head = client.head("/api/v1/events/stream", HTTP_ACCEPT="text/event-stream")
    assert head.status_code == 200 and not head.streaming
    assert head["Content-Type"] == "text/event-stream"
    assert head["Cache-Control"] == "no-cache" and head.content == b""
    missing = client.head("/api/v1/events/stream", {"conversation": "nope"})
    assert missing.status_code == 404
