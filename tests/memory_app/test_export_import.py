"""Export and import: an import of an export reproduces it exactly, conflicts
follow the chosen mode, and a tampered or malformed file writes nothing."""

import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.db import connection
from rest_framework.test import APIClient

from memory_app.actors import Actor
from memory_app.errors import InvalidInput
from memory_app.models import Conversation, DreamReviewItem, MemoryDocument, MemoryVersion
from memory_app.selectors.chain import version_chain_verify
from memory_app.services.conversations import conversation_open
from memory_app.services.documents import head_update
from memory_app.services.export import export_lines
from memory_app.services.importing import memory_import
from memory_app.services.promote import (
    memory_propose_promotion,
    promotion_approve,
    promotion_reject,
)
from memory_app.services.remember import RememberInput, memory_remember
from memory_app.services.stores import store_workspace_ensure
from memory_app.services.versions import SourceRef
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

TOPICS = (
    "Restart the payments consumer after a configmap change.",
    "Kafka lag on checkout: scale the group to the partition count.",
    "DNS timeouts in staging: switch to the node-local cache.",
)
MEMORY_TABLES = (
    "memory_app_memorysourceref",
    "memory_app_dreamreviewitem_related_documents",
    "memory_app_dreamreviewitem",
    "memory_app_dreamjob",
    "memory_app_memoryusage",
    "memory_app_contexttrace",
    "memory_app_memoryevent",
    "memory_app_memoryversion",
    "memory_app_memorydocument",
)


@pytest.fixture
def world(reviewer):
    """Drafts with edits and source refs, one promoted, one rejected, one pending."""
    store_workspace_ensure(slug="workspace_runbooks", name="Runbooks")
    agent = UserFactory(username="exporter", service_account=True)
    conversation = conversation_open(user=agent, external_id="export-1")
    actor = Actor(user=agent, agent=agent, conversation=conversation, run_id="run-9")
    written = []
    for n in range(3):
        written.append(
            memory_remember(
                actor=actor,
                data=RememberInput(
                    store="conversation",
                    path=f"fixes/{n}",
                    content=f"{TOPICS[n]} — ünïcode ✓",
                    source_refs=[SourceRef(kind="tool_call", ref=f"call-{n}")],
                ),
            ).document
        )
    memory_remember(
        actor=actor,
        data=RememberInput(store="conversation", path="fixes/0", content="Fix 0, second take."),
    )
    items = []
    for document in written:
        document.refresh_from_db()
        items.append(
            memory_propose_promotion(
                actor=actor, document=document, target_store="workspace_runbooks", rationale="ok"
            ).item
        )
    promotion_approve(user=reviewer, item_id=items[0].pk, note="good")
    promotion_reject(user=reviewer, item_id=items[1].pk, note="too specific")


def export_text() -> str:
    return "\n".join(export_lines(MemoryDocument.objects.all())) + "\n"


def wipe_memory() -> None:
    """Empty the memory tables, as their owner with the append-only triggers
    off (the test's transaction switches them back on)."""
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        for table in ("memory_app_memoryversion", "memory_app_memorysourceref"):
            cursor.execute(f"ALTER TABLE {table} DISABLE TRIGGER USER")
        cursor.execute(f"TRUNCATE {', '.join(MEMORY_TABLES)}, memory_app_memorystore CASCADE")


def test_an_import_of_an_export_reproduces_it_exactly(world):
    before = export_text()
    lines = before.splitlines()
    documents = [json.loads(line) for line in lines if '"type": "document"' in line]
    assert {d["path"] for d in documents} >= {"fixes/0", "fixes/1", "fixes/2"}
    fixes0 = next(d for d in documents if d["path"] == "fixes/0" and "conversation" in d["store"])
    assert [v["version"] for v in fixes0["versions"]] == [1, 2]
    assert fixes0["versions"][0]["source_refs"] == [["tool_call", "call-0"]]
    assert {r["status"] for d in documents for r in d["reviews"]} == {
        "approved",
        "rejected",
        "pending",
    }

    wipe_memory()
    assert not MemoryDocument.objects.exists()
    report = memory_import(io.StringIO(before))
    assert report.created == len(documents) and report.reviews == 3
    assert export_text() == before
    for document in MemoryDocument.objects.all():
        assert version_chain_verify(document).intact
    promoted = MemoryDocument.objects.get(store__slug="workspace_runbooks", path="fixes/0")
    assert promoted.promoted_from is not None
    assert DreamReviewItem.objects.get(status="rejected").decision_note == "too specific"


def test_importing_twice_skips_what_is_there(world):
    text = export_text()
    report = memory_import(io.StringIO(text))
    assert report.created == 0 and report.skipped == MemoryDocument.objects.count()
    assert export_text() == text


def test_overwrite_appends_the_imported_head_as_a_version(world):
    text = export_text()
    document = MemoryDocument.objects.get(path="fixes/2", store__scope="conversation")
    exported = next(json.loads(x) for x in text.splitlines() if str(document.pk) in x)
    head_update(document, change="update", author=None, fields={"content": "changed here"})
    report = memory_import(io.StringIO(text), mode="overwrite")
    document.refresh_from_db()
    assert report.overwritten == 1
    assert document.content == exported["content"]
    assert document.versions.count() == 3
    assert version_chain_verify(document).intact


def test_new_ids_with_a_store_map_copies_into_another_store(world):
    text = export_text()
    count = MemoryDocument.objects.count()
    report = memory_import(
        io.StringIO(text),
        mode="new-ids",
        store_map={"workspace_runbooks": "workspace_copy"},
    )
    copied = MemoryDocument.objects.filter(store__slug="workspace_copy")
    assert copied.count() == 1
    assert report.created == 1  # the conversation paths are taken here: conflicts
    assert len(report.conflicts) == count - 1
    assert report.reviews == 0  # the copied document was a promotion's result, not its source
    assert version_chain_verify(copied.get()).intact


def test_a_tampered_history_is_refused_and_nothing_is_written(world):
    text = export_text()
    wipe_memory()
    tampered = text.replace("Kafka lag", "Kafka lag is fine", 1)
    with pytest.raises(Exception, match="nothing was written") as raised:
        memory_import(io.StringIO(tampered))
    assert "does not" in str(raised.value)
    assert not MemoryDocument.objects.exists()
    assert not MemoryVersion.objects.exists()


def test_a_moment_python_cannot_read_back_is_refused_and_nothing_is_written(world):
    lines = export_text().splitlines()
    index = next(i for i, line in enumerate(lines) if json.loads(line).get("type") == "document")
    document = json.loads(lines[index])
    document["expires_at"] = "9999-12-31T23:59:59-14:00"
    lines[index] = json.dumps(document)
    wipe_memory()
    with pytest.raises(InvalidInput, match="expires_at: Must fall between the years 1 and 9999"):
        memory_import(io.StringIO("\n".join(lines)))
    assert not MemoryDocument.objects.exists()


def test_a_malformed_review_decision_is_refused_whole(world):
    lines = export_text().splitlines()
    wipe_memory()
    for index, line in enumerate(lines):
        if '"reviews": [{' in line:
            document = json.loads(line)
            document["reviews"][0]["job_kind"] = "nonsense"
            lines[index] = json.dumps(document)
            break
    with pytest.raises(InvalidInput, match="review decisions"):
        memory_import(io.StringIO("\n".join(lines)))
    assert not MemoryDocument.objects.exists()


def _counted_rows(model) -> float:
    """The table's row count as the planner's statistics give it."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT reltuples FROM pg_class WHERE oid = %s::regclass", [model._meta.db_table]
        )
        return cursor.fetchone()[0]


def test_an_import_leaves_the_planner_counting_what_it_wrote(world, tmp_path):
    path = tmp_path / "memory.jsonl"
    call_command("memory_export", "--output", str(path))
    wipe_memory()
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {MemoryDocument._meta.db_table}")
    assert _counted_rows(MemoryDocument) == 0
    call_command("memory_import", str(path), stdout=io.StringIO())
    # Counted again at once, not when autovacuum next gets to it, so the
    # first writes after an import plan their duplicate check on the index.
    assert _counted_rows(MemoryDocument) == MemoryDocument.objects.count() > 0


@pytest.mark.parametrize(
    "text",
    [
        "not json\n",
        '{"type": "header", "format": "something-else", "format_version": 1}\n',
        "[1, 2]\n",
    ],
)
def test_malformed_files_are_refused(text):
    with pytest.raises(Exception, match="nothing was written"):
        memory_import(io.StringIO(text))


def test_the_commands_round_trip_through_a_file(world, tmp_path):
    path = tmp_path / "memory.jsonl"
    call_command("memory_export", "--output", str(path))
    before = path.read_text()
    wipe_memory()
    out = io.StringIO()
    call_command("memory_import", str(path), stdout=out)
    assert "created" in out.getvalue()
    assert export_text() == before
    with pytest.raises(CommandError, match="FROM=TO"):
        call_command("memory_import", str(path), "--map-store", "nonsense")
    with pytest.raises(CommandError):
        call_command("memory_import", str(tmp_path / "missing.jsonl"))


def test_only_superusers_download_the_export(client, owner, world):
    client.force_login(owner)
    assert client.get("/export/memory.jsonl").status_code == 403
    admin = UserFactory(username="root", is_superuser=True)
    client.force_login(admin)
    response = client.get("/export/memory.jsonl")
    assert response.status_code == 200
    assert "attachment" in response["Content-Disposition"]
    body = b"".join(response.streaming_content).decode()
    assert body == export_text()


def test_memory_user_activates_an_imported_author_and_its_key_works(tmp_path):
    author = UserFactory(username="alice")
    conversation = conversation_open(user=author, external_id="alice-1")
    actor = Actor(user=author, agent=author, conversation=conversation)
    memory_remember(
        actor=actor, data=RememberInput(store="conversation", path="n/1", content="A fact.")
    )
    text = export_text()
    wipe_memory()
    Conversation.objects.all().delete()
    author.delete()
    memory_import(text.splitlines())
    imported = get_user_model().objects.get(username="alice")
    assert not imported.is_active
    out, err = io.StringIO(), io.StringIO()
    call_command("memory_user", "alice", stdout=out, stderr=err)
    assert "alice was inactive" in err.getvalue()
    key = out.getvalue().strip().splitlines()[-1]
    response = APIClient().get("/api/v1/me", HTTP_AUTHORIZATION=f"Token {key}")
    assert response.status_code == 200
    assert response.json()["username"] == "alice"
    again = io.StringIO()
    call_command("memory_user", "alice", stdout=io.StringIO(), stderr=again)
    assert "inactive" not in again.getvalue()
