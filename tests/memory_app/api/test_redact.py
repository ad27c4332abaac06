"""Redaction removes a secret from a document's whole history, chain intact."""

import io
import uuid
from dataclasses import replace

import numpy as np
import pytest
from django.core.management import call_command
from django.db import connection
from psycopg import sql
from rest_framework.test import APIClient

from memory_app.actors import actor_for
from memory_app.models import MemoryDocument, MemoryEvent
from memory_app.paths import path_error
from memory_app.services.curate import document_rollback
from memory_app.services.delete import memory_delete_request
from memory_app.services.documents import embedding_for, head_update
from memory_app.services.export import export_lines
from memory_app.services.principals import api_key_issue
from memory_app.services.promote import promotion_approve
from memory_app.services.redact import MARKER, document_redact, redaction_preview
from memory_app.services.stores import store_for_user
from memory_app.services.versions import SourceRef
from tests.factories import UserFactory, WorkspaceStoreFactory, make_document
from tests.memory_app.test_history_chain import TRIGGERS_OFF

pytestmark = pytest.mark.django_db

# Text the scanner does not recognise: the case redaction exists for.
SECRET = "orchid-lantern-4217"


def _client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_key_issue(user=user).raw}")
    return client


def _tables_holding(text: str) -> list[str]:
    """Every table of the database with a row whose text contains `text`."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_schema = 'public' AND table_type = 'BASE TABLE'"
        )
        tables = [name for (name,) in cursor.fetchall()]
        holding = []
        for table in tables:
            query = sql.SQL("SELECT count(*) FROM {} AS t WHERE t::text LIKE %s")
            cursor.execute(query.format(sql.Identifier(table)), [f"%{text}%"])
            if cursor.fetchone()[0]:
                holding.append(table)
    return holding


@pytest.fixture
def leaked(reviewer, agent):
    """A runbook whose history, refs, review items and events quote the secret."""
    store = WorkspaceStoreFactory(slug="workspace_runbooks")
    document = make_document(
        store,
        path="deploy/bootstrap",
        content=f"Bootstrap the cluster with {SECRET} as the join value.",
        author=reviewer,
    )
    head_update(
        document,
        change="update",
        author=reviewer,
        fields={
            "content": f"Bootstrap with {SECRET}; rotate it after the first node joins.",
            "title": f"Bootstrap ({SECRET})",
        },
        source_refs=[SourceRef("url", f"https://wiki.example.com/bootstrap?v={SECRET}")],
    )
    head_update(
        document,
        change="update",
        author=reviewer,
        fields={"content": "Bootstrap with the join value from the vault."},
    )
    memory_delete_request(
        actor=replace(actor_for(agent), run_id="run-redact"),
        document=document,
        reason=f"leaks {SECRET}",
    )
    document_rollback(user=reviewer, document=document, version=2, reason=f"restore {SECRET}")
    assert set(_tables_holding(SECRET)) >= {
        "memory_app_memoryversion",
        "memory_app_memorydocument",
        "memory_app_memorysourceref",
        "memory_app_dreamreviewitem",
        "memory_app_memoryevent",
    }
    return MemoryDocument.objects.get(pk=document.pk)


def _redact(user, document, body):
    return _client(user).post(f"/api/v1/documents/{document.pk}/redact", body, format="json")


def test_redaction_removes_the_text_from_every_table(reviewer, leaked):
    response = _redact(reviewer, leaked, {"text": SECRET})
    assert response.status_code == 200, response.content
    assert SECRET not in response.content.decode()
    assert _tables_holding(SECRET) == []
    document = MemoryDocument.objects.get(pk=leaked.pk)
    assert response.json()["version"] == document.version == leaked.version + 1
    assert document.content == f"Bootstrap with {MARKER}; rotate it after the first node joins."
    assert [v.content.count(MARKER) for v in document.versions.order_by("version")] == [
        1,
        1,
        0,
        1,
        1,
    ]


def test_the_chain_verifies_and_records_who_redacted(reviewer, leaked):
    _redact(reviewer, leaked, {"text": SECRET})
    out = io.StringIO()
    call_command("memory_verify", "--store", "workspace_runbooks", stdout=out)
    assert "every history chain is intact" in out.getvalue()
    last = leaked.versions.order_by("-version").first()
    assert (last.change, last.author_name) == ("redact", "reviewer")
    assert "version(s) 1-4" in last.reason
    event = MemoryEvent.objects.get(type="memory.document.redacted")
    assert event.principal == reviewer
    assert event.payload["versions"] == [1, 2, 3, 4]
    assert event.payload["characters"] == len(SECRET)
    assert SECRET not in str(event.payload)


def test_search_index_and_embedding_follow_the_redaction(reviewer, leaked, tools):
    query = {"query": "orchid lantern", "mode": "text"}
    assert [r["id"] for r in tools.ok("memory_search", query)["results"]] == [str(leaked.pk)]
    _redact(reviewer, leaked, {"text": SECRET})
    assert tools.ok("memory_search", query)["results"] == []
    document = MemoryDocument.objects.get(pk=leaked.pk)
    expected = embedding_for(document.title, document.recall_hint, document.content)
    assert np.allclose(document.embedding, expected)


def test_an_export_after_redaction_holds_only_the_marker(reviewer, leaked):
    _redact(reviewer, leaked, {"text": SECRET})
    exported = "\n".join(export_lines(MemoryDocument.objects.filter(pk=leaked.pk)))
    assert SECRET not in exported
    assert MARKER in exported


def test_a_span_of_an_old_version_is_redacted_everywhere(reviewer, leaked):
    first = leaked.versions.get(version=1).content
    start = first.index(SECRET)
    body = {"version": 1, "start": start, "end": start + len(SECRET)}
    assert _redact(reviewer, leaked, body).status_code == 200
    assert _tables_holding(SECRET) == []


def test_a_span_defaults_to_the_head(reviewer, leaked):
    start = leaked.content.index(SECRET)
    response = _redact(reviewer, leaked, {"start": start, "end": start + len(SECRET)})
    assert response.status_code == 200
    assert _tables_holding(SECRET) == []


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "body"),
        ({"text": SECRET, "start": 0, "end": 3}, "body"),
        ({"start": 3}, "body"),
        ({"start": 5, "end": 5}, "body"),
        ({"start": 0, "end": 100_000}, "end"),
        ({"version": 99, "start": 0, "end": 3}, "version"),
        ({"text": "   "}, "text"),
        ({"text": "never-written-anywhere"}, "text"),
        ({"text": SECRET, "extra": 1}, "extra"),
    ],
)
def test_bad_requests_are_400_and_change_nothing(reviewer, leaked, body, field):
    response = _redact(reviewer, leaked, body)
    assert response.status_code == 400, response.content
    assert response.json()["error"] == "invalid_input"
    assert field in response.json()["fields"]
    assert MemoryDocument.objects.get(pk=leaked.pk).version == leaked.version
    assert "memory_app_memoryversion" in _tables_holding(SECRET)


def test_who_may_not_redact_gets_403_and_who_may_not_see_gets_404(leaked, agent, owner):
    assert _redact(agent, leaked, {"text": SECRET}).status_code == 403
    assert _redact(owner, leaked, {"text": SECRET}).status_code == 403
    private = make_document(
        _user_store(owner),
        path="prefs/editor",
        content=f"token {SECRET}",
        doc_type="user_preference",
    )
    response = _redact(UserFactory(username="stranger"), private, {"text": SECRET})
    assert response.status_code == 404
    assert response.json()["error"] == "not_found"
    assert "memory_app_memoryversion" in _tables_holding(SECRET)


def test_the_owner_redacts_in_their_own_user_store(owner):
    private = make_document(
        _user_store(owner),
        path="prefs/editor",
        content=f"token {SECRET}",
        doc_type="user_preference",
    )
    assert _redact(owner, private, {"text": SECRET}).status_code == 200
    assert _tables_holding(SECRET) == []


def _user_store(user):
    return store_for_user(user=user)


def test_a_reviewer_redacts_a_draft_a_review_item_names(reviewer, tools):
    """The draft an agent asked to delete is in its conversation, which the
    reviewer cannot read; the request brings it before them, as on the page."""
    draft = tools.ok(
        "memory_remember",
        {"store": "conversation", "path": "notes/join", "content": f"join with {SECRET}"},
        status=201,
    )
    kept = tools.ok(
        "memory_remember",
        {"store": "conversation", "path": "notes/other", "content": f"also {SECRET}"},
        status=201,
    )
    tools.ok("memory_delete", {"id": draft["id"]}, status=202)
    named = MemoryDocument.objects.get(pk=draft["id"])
    response = _redact(reviewer, named, {"text": SECRET})
    assert response.status_code == 200, response.json()
    assert SECRET not in MemoryDocument.objects.get(pk=draft["id"]).content
    unnamed = MemoryDocument.objects.get(pk=kept["id"])
    assert _redact(reviewer, unnamed, {"text": SECRET}).status_code == 404


def _promoted(caller, reviewer, store: str, content: str) -> tuple[str, MemoryDocument]:
    """A draft written in `store`, proposed into the runbooks and approved:
    the draft's id and the shared document."""
    WorkspaceStoreFactory(slug="workspace_runbooks")
    draft = caller.ok(
        "memory_remember",
        {"store": store, "path": "notes/join", "content": content, "doc_type": "user_preference"}
        if store == "user"
        else {"store": store, "path": "notes/join", "content": content},
        status=201,
    )
    proposal = caller.ok(
        "memory_propose_promotion",
        {"id": draft["id"], "target_store": "workspace_runbooks", "rationale": "Seen twice."},
        status=202,
    )
    shared = promotion_approve(user=reviewer, item_id=proposal["review_item_id"])
    return draft["id"], shared


def test_redacting_a_promoted_document_redacts_its_draft_too(reviewer, tools):
    draft_id, shared = _promoted(tools, reviewer, "conversation", f"join with {SECRET}")
    preview = redaction_preview(user=reviewer, document=shared, text=SECRET)
    assert [d.pk for d in preview.also] == [uuid.UUID(draft_id)]
    assert _redact(reviewer, shared, {"text": SECRET}).status_code == 200
    assert _tables_holding(SECRET) == []
    draft = tools.ok("memory_read", {"id": draft_id})
    assert draft["content"] == f"join with {MARKER}"
    found = tools.ok("memory_search", {"query": SECRET, "mode": "text"})["results"]
    assert found == []


def test_an_owner_redacts_only_their_own_side_of_the_lineage(owner, reviewer, caller_for):
    draft_id, shared = _promoted(
        caller_for(owner), reviewer, "user", f"pinned editor build {SECRET}"
    )
    draft = MemoryDocument.objects.get(pk=draft_id)
    assert _redact(owner, draft, {"text": SECRET}).status_code == 200
    assert SECRET not in MemoryDocument.objects.get(pk=draft_id).content
    assert SECRET in MemoryDocument.objects.get(pk=shared.pk).content


def test_a_linked_document_with_a_broken_history_is_named_and_left_as_it_is(reviewer, tools):
    first, shared = _promoted(tools, reviewer, "conversation", f"join with {SECRET}")
    second = tools.ok(
        "memory_remember",
        {"store": "conversation", "path": "notes/two", "content": f"again {SECRET}"},
        status=201,
    )
    proposal = tools.ok(
        "memory_propose_promotion",
        {
            "id": second["id"],
            "target_store": "workspace_runbooks",
            "target_path": shared.path,
            "rationale": "Seen again.",
        },
        status=202,
    )
    shared = promotion_approve(user=reviewer, item_id=proposal["review_item_id"])
    with connection.cursor() as cursor:
        cursor.execute(TRIGGERS_OFF)
        cursor.execute(
            "UPDATE memory_app_memoryversion SET content = content || ' (edited)' "
            "WHERE document_id = %s",
            [second["id"]],
        )
    result = document_redact(user=reviewer, document=shared, text=SECRET)
    assert [d.pk for d in result.also] == [uuid.UUID(first)]
    assert [d.pk for d in result.broken] == [uuid.UUID(second["id"])]
    assert SECRET not in MemoryDocument.objects.get(pk=shared.pk).content
    assert SECRET not in MemoryDocument.objects.get(pk=first).content
    assert SECRET in MemoryDocument.objects.get(pk=second["id"]).content


def test_a_path_holding_the_text_moves_and_takes_its_review_items_along(reviewer, tools):
    WorkspaceStoreFactory(slug="workspace_runbooks")
    taken = tools.ok(
        "memory_remember",
        {"store": "conversation", "path": "hosts/redacted", "content": "Another host."},
        status=201,
    )
    draft = tools.ok(
        "memory_remember",
        {"store": "conversation", "path": f"hosts/{SECRET}", "content": f"Host {SECRET} is up."},
        status=201,
    )
    proposal = tools.ok(
        "memory_propose_promotion",
        {"id": draft["id"], "target_store": "workspace_runbooks", "rationale": "Seen twice."},
        status=202,
    )
    document = MemoryDocument.objects.get(pk=draft["id"])
    preview = redaction_preview(user=reviewer, document=document, text=SECRET.upper())
    assert (preview.versions, preview.path) == ([], "hosts/redacted-2")

    response = _redact(reviewer, document, {"text": SECRET})
    assert response.status_code == 200, response.json()
    assert response.json()["path"] == "hosts/redacted-2"
    assert _tables_holding(SECRET) == []
    assert tools.ok("memory_read", {"id": taken["id"]})["path"] == "hosts/redacted"
    moved = tools.ok("memory_read", {"store": "conversation", "path": "hosts/redacted-2"})
    assert moved["content"] == f"Host {MARKER} is up."
    shared = promotion_approve(user=reviewer, item_id=proposal["review_item_id"])
    assert (shared.store.slug, shared.path) == ("workspace_runbooks", "hosts/redacted")


def test_a_redaction_of_a_long_history_names_its_versions_within_a_reason(reviewer):
    document = make_document(WorkspaceStoreFactory(), path="notes/flip", content=SECRET)
    for number in range(2, 242):
        content = SECRET if number % 2 else f"without it, take {number}"
        head_update(document, change="update", author=reviewer, fields={"content": content})
    result = document_redact(user=reviewer, document=document, text=SECRET)
    assert len(result.versions) == 121
    reason = document.versions.order_by("-version").first().reason
    assert reason.startswith("Redacted 121 occurrence(s) in version(s) 1, 3, 5, ")
    assert reason.endswith(", 199 and 21 more.") and len(reason) < 2000


@pytest.mark.parametrize("token", ["zq8secret77", "ZQ8SECRET77"])
def test_events_name_the_moved_paths_whatever_the_case_of_the_text(reviewer, tools, token):
    WorkspaceStoreFactory(slug="workspace_runbooks")
    draft = tools.ok(
        "memory_remember",
        {"store": "conversation", "path": "keys/zq8secret77", "content": f"Key {token} rotates."},
        status=201,
    )
    tools.ok(
        "memory_propose_promotion",
        {"id": draft["id"], "target_store": "workspace_runbooks", "rationale": "Seen twice."},
        status=202,
    )
    document = MemoryDocument.objects.get(pk=draft["id"])
    assert _redact(reviewer, document, {"text": token}).status_code == 200
    assert _tables_holding("zq8secret77") == _tables_holding("ZQ8SECRET77") == []
    paths = {
        (key, event.payload[key])
        for event in MemoryEvent.objects.filter(document=document)
        for key in ("path", "target_path")
        if key in event.payload
    }
    assert paths >= {("path", "keys/redacted"), ("target_path", "keys/redacted")}
    assert all(path_error(path) is None for _, path in paths)
