"""Export and import: an import of an export reproduces it exactly, conflicts
follow the chosen mode, and a tampered or malformed file writes nothing."""

import errno
import io
import json
import os
import signal
import sys

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.db import connection
from django.utils.dateparse import parse_datetime
from rest_framework.test import APIClient

from memory_app.actors import Actor
from memory_app.errors import InvalidInput
from memory_app.hashing import (
    GENESIS,
    chain_key_current,
    chain_sha256,
    record_sha256,
    sha256_text,
)
from memory_app.management.commands import memory_export as memory_export_command
from memory_app.management.commands import memory_import as memory_import_command
from memory_app.models import (
    Conversation,
    DreamReviewItem,
    MemoryDocument,
    MemoryStore,
    MemoryVersion,
)
from memory_app.safety import SCANNER_VERSION
from memory_app.selectors.chain import version_chain_verify
from memory_app.services import export as export_service
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


def as_imported(text: str) -> str:
    """An export as an import of it exports again: every version stamped
    with the scan the import ran (the seeds' versions carry none)."""
    rows = [json.loads(line) for line in text.splitlines()]
    for row in rows:
        for version in row.get("versions", []):
            version["scanner_version"] = SCANNER_VERSION
    return "".join(
        json.dumps(row, sort_keys=True, ensure_ascii=row["type"] != "document") + "\n"
        for row in rows
    )


def resign(document: dict, *, records: bool = True) -> dict:
    """Sign an edited document line's history again with this instance's
    chain key, as only the key's holder can (without `records`: as links
    were signed before they held the version's record)."""
    key = chain_key_current()
    previous_chain, previous_sha = GENESIS, ""
    for version in document["versions"]:
        version["sha256"] = sha256_text(version["content"])
        version["parent_sha256"] = previous_sha
        version["chain_key_id"] = key.id
        version["chain_sha256"] = chain_sha256(
            key=key,
            previous_chain=previous_chain,
            version=version["version"],
            change=version["change"],
            content_sha256=version["sha256"],
            author_name=version["author_name"],
            created_at=parse_datetime(version["created_at"]),
            record_sha256=record_sha256(
                **{k: version[k] for k in ("title", "recall_hint", "reason", "run_id")},
                metadata=version["metadata"],
                source_refs=version["source_refs"],
            )
            if records
            else None,
        )
        previous_chain, previous_sha = version["chain_sha256"], version["sha256"]
    document["content_sha256"] = sha256_text(document["content"])
    return document


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
    assert export_text() == as_imported(before)
    for document in MemoryDocument.objects.all():
        assert version_chain_verify(document).intact
    promoted = MemoryDocument.objects.get(store__slug="workspace_runbooks", path="fixes/0")
    assert promoted.promoted_from is not None
    assert DreamReviewItem.objects.get(status="rejected").decision_note == "too specific"


def test_an_export_signed_before_links_held_records_imports_signed_in_full(world):
    lines = export_text().splitlines()
    for number, line in enumerate(lines):
        if '"type": "document"' in line:
            lines[number] = json.dumps(resign(json.loads(line), records=False))
    wipe_memory()
    report = memory_import(io.StringIO("\n".join(lines) + "\n"))
    assert report.created == MemoryDocument.objects.count() > 0
    for document in MemoryDocument.objects.all():
        assert version_chain_verify(document).intact


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
    with pytest.raises(
        InvalidInput,
        match="line 5: expires_at: Value error, Must fall between the years 1 and 9999",
    ):
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
    with pytest.raises(InvalidInput, match=r"line \d+: reviews\.0\.job_kind: Input should be"):
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
    assert export_text() == as_imported(before)
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


# What an operator sees of memory_import and memory_export ------------------


def export_rows() -> list[dict]:
    return [json.loads(line) for line in export_text().splitlines()]


def write_rows(path, rows: list[dict]) -> str:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return str(path)


def import_refused(path: str, *args: str) -> str:
    """memory_import of `path`, which must be refused whole; its message."""
    before = MemoryDocument.objects.count(), MemoryVersion.objects.count()
    with pytest.raises(CommandError, match="nothing was written") as raised:
        call_command("memory_import", path, *args, stdout=io.StringIO(), stderr=io.StringIO())
    assert (MemoryDocument.objects.count(), MemoryVersion.objects.count()) == before
    return str(raised.value)


def first_document(rows: list[dict]) -> tuple[int, dict]:
    """The first document line: its line number and its row."""
    index = next(i for i, row in enumerate(rows) if row["type"] == "document")
    return index + 1, rows[index]


def test_an_import_refuses_a_head_that_differs_from_its_last_version(world, tmp_path):
    rows = export_rows()
    number, document = first_document(rows)
    document["content"] = "Rewritten in SQL before the export."
    document["content_sha256"] = sha256_text(document["content"])
    wipe_memory()
    message = import_refused(write_rows(tmp_path / "in.jsonl", rows))
    assert (
        f"line {number}: the head differs from its last version in content, content_sha256"
    ) in message


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("entities", ["x"], "entities: Input should be an object"),
        ("tags", [1, 2], "tags.0: Input should be a valid string"),
        ("created_by", 42, "created_by: Input should be a valid string"),
        ("created_by", "al\x07ice", "created_by: Control character U+0007"),
        ("id", "not-a-uuid", "id: Input should be a valid UUID"),
        ("promoted_from", ["not-a-uuid", 1], "promoted_from.0: Input should be a valid UUID"),
        ("promoted_from", "v1", "promoted_from: Input should be a valid array"),
        ("always_inject", "yes", "always_inject: Input should be a valid boolean"),
        ("store", 123, "store: Input should be a valid string"),
        ("store", "user:", "store: Value error, a username is 1 to 150 characters"),
        ("store", "Bad Slug", "store: Value error, a store is 'system:<slug>'"),
        ("versions", "none", "versions: Input should be a valid array"),
    ],
)
def test_an_import_refuses_a_field_the_api_would_refuse(world, tmp_path, field, value, said):
    rows = export_rows()
    number, document = first_document(rows)
    document[field] = value
    wipe_memory()
    assert f"line {number}: {said}" in import_refused(write_rows(tmp_path / "in.jsonl", rows))
    assert not get_user_model().objects.filter(username__in=["42", "al\x07ice"]).exists()


def test_an_import_refuses_a_version_whose_metadata_is_not_an_object(world, tmp_path):
    rows = export_rows()
    number, document = first_document(rows)
    document["versions"][0]["metadata"] = "str"
    wipe_memory()
    message = import_refused(write_rows(tmp_path / "in.jsonl", rows))
    assert f"line {number}: versions.0.metadata: Input should be an object" in message


def test_an_import_refuses_reviewed_trust_in_a_conversation_store(world, tmp_path):
    rows = export_rows()
    number, document = next(
        (n, row) for n, row in enumerate(rows, start=1) if row.get("store", "").startswith("conv")
    )
    # The head and its last version agree: only the store says it cannot be.
    document["trust"] = document["versions"][-1]["metadata"]["trust"] = "admin_approved"
    resign(document)
    wipe_memory()
    message = import_refused(write_rows(tmp_path / "in.jsonl", rows))
    assert (
        f"line {number}: trust: admin_approved comes from a reviewer or a seed, "
        "never in a conversation store"
    ) in message


def test_an_import_refuses_a_store_map_to_a_name_no_store_can_have(world, tmp_path):
    path = write_rows(tmp_path / "in.jsonl", export_rows())
    wipe_memory()
    with pytest.raises(CommandError, match="Cannot import workspace_runbooks as Bad Slug"):
        call_command("memory_import", path, "--map-store", "workspace_runbooks=Bad Slug")
    assert not MemoryDocument.objects.exists()


def test_an_import_refuses_a_store_map_from_a_store_the_file_does_not_hold(world, tmp_path):
    path = write_rows(tmp_path / "in.jsonl", export_rows())
    wipe_memory()
    message = import_refused(path, "--map-store", "workspace_typo=workspace_copy")
    assert "The file holds no store workspace_typo to import as another" in message


def test_a_file_that_is_not_utf8_is_refused_by_line_number_without_its_bytes(tmp_path):
    path = tmp_path / "in.jsonl"
    header = export_text().splitlines()[0]
    line = b'{"content": "token hunter2-secret \xff"}\n'
    path.write_bytes(header.encode() + b"\n" + line)
    message = import_refused(str(path))
    assert f"line 2: not UTF-8 (byte {line.index(0xFF) + 1} of the line)" in message
    assert "hunter2" not in message


def test_a_database_refusal_names_the_line_not_the_row(world, tmp_path):
    rows = export_rows()
    conversation = next(
        row for row in rows if row["type"] == "store" and row["scope"] == "conversation"
    )
    conversation["participants"] = []  # a conversation here needs someone who opened it
    number = next(
        n for n, row in enumerate(rows, start=1) if row.get("store") == conversation["ref"]
    )
    wipe_memory()
    message = import_refused(
        write_rows(tmp_path / "in.jsonl", rows),
        "--map-store",
        f"{conversation['ref']}=conversation:fresh-1",
    )
    assert f"line {number}: the database refused it (IntegrityError)" in message
    assert "Failing row" not in message and "DETAIL" not in message
    assert "payments" not in message.lower()


def test_an_empty_file_is_refused(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text("\n\n")
    assert "the file is empty: it has no header line" in import_refused(str(path))


def test_a_file_without_a_header_is_refused_even_after_a_blank_line(world, tmp_path):
    rows = export_rows()[1:]
    wipe_memory()
    path = tmp_path / "in.jsonl"
    path.write_text("\n" + "".join(json.dumps(row) + "\n" for row in rows))
    message = import_refused(str(path))
    assert "line 2: not the header of a agent-memory-export file of version 1 or 2" in message


def test_an_export_of_nothing_imports_as_nothing(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(export_lines(MemoryDocument.objects.none())) + "\n")
    out = io.StringIO()
    call_command("memory_import", str(path), stdout=out)
    assert out.getvalue().startswith("created 0, overwritten 0, skipped 0")


@pytest.mark.parametrize("cut", [1, 2])
def test_a_file_cut_short_at_a_line_end_is_refused(world, tmp_path, cut):
    rows = export_rows()
    assert rows[-1] == {"type": "end", "stores": 3, "documents": len(rows) - 5}
    wipe_memory()
    message = import_refused(write_rows(tmp_path / "in.jsonl", rows[:-cut]))
    assert "the file ends before its end line: it was cut short" in message


def test_a_file_missing_a_line_in_the_middle_is_refused(world, tmp_path):
    rows = export_rows()
    number, _ = first_document(rows)
    del rows[number - 1]
    wipe_memory()
    message = import_refused(write_rows(tmp_path / "in.jsonl", rows))
    documents = len(rows) - 5
    assert (
        f"line {len(rows)}: the end line counts 3 stores and {documents + 1} documents, "
        f"the file holds 3 and {documents}: lines are missing"
    ) in message


def test_a_version_1_export_without_an_end_line_still_imports(world, tmp_path):
    before = export_text()
    rows = [json.loads(line) for line in before.splitlines()][:-1]
    rows[0]["format_version"] = 1
    wipe_memory()
    out = io.StringIO()
    call_command("memory_import", write_rows(tmp_path / "in.jsonl", rows), stdout=out)
    assert out.getvalue().startswith(f"created {len(rows) - 4},")
    assert export_text() == as_imported(before)


def test_the_import_says_how_far_it_got_on_stderr(world, tmp_path, monkeypatch):
    path = write_rows(tmp_path / "in.jsonl", export_rows())
    monkeypatch.setattr(memory_import_command, "PROGRESS_SECONDS", 0)
    errors = io.StringIO()
    call_command("memory_import", path, stdout=io.StringIO(), stderr=errors)
    assert errors.getvalue().splitlines()[:2] == ["read 1 lines", "read 2 lines"]


def test_the_export_says_how_far_it_got_on_stderr(world, tmp_path, monkeypatch):
    total = MemoryDocument.objects.count()
    monkeypatch.setattr(memory_export_command, "PROGRESS_SECONDS", 0)
    errors = io.StringIO()
    call_command("memory_export", "-o", str(tmp_path / "out.jsonl"), stderr=errors)
    lines = errors.getvalue().splitlines()
    assert lines[:2] == [f"exported 1 of {total} documents", f"exported 2 of {total} documents"]
    assert lines[-1] == f"exported {total + 5} lines (header, stores, documents, end)"


def test_an_export_of_a_store_that_does_not_exist_is_refused(world):
    with pytest.raises(CommandError, match=r"No store named typo\. Stores: .*workspace_runbooks"):
        call_command("memory_export", "--store", "typo", stdout=io.StringIO())


@pytest.mark.parametrize("name", ["conversation:export-1", "conversation-{pk}"])
def test_an_export_names_a_store_as_the_api_does_or_by_its_slug(world, name, tmp_path):
    store = MemoryStore.objects.get(conversation__external_id="export-1")
    path = tmp_path / "one.jsonl"
    store_name = name.format(pk=store.conversation_id)
    call_command("memory_export", "--store", store_name, "-o", str(path), stderr=io.StringIO())
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    stores = {row["store"] for row in rows if row["type"] == "document"}
    assert stores == {"conversation:export-1"}


def test_a_failing_export_leaves_the_previous_one_in_place(world, tmp_path, monkeypatch):
    path = tmp_path / "memory.jsonl"
    call_command("memory_export", "-o", str(path), stderr=io.StringIO())
    before = path.read_text()

    def failing(document):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(export_service, "document_line", failing)
    with pytest.raises(RuntimeError):
        call_command("memory_export", "-o", str(path), stderr=io.StringIO())
    assert path.read_text() == before
    assert [p.name for p in tmp_path.iterdir()] == ["memory.jsonl"]


def test_a_full_disk_is_reported_and_the_previous_export_kept(world, tmp_path, monkeypatch):
    path = tmp_path / "memory.jsonl"
    path.write_text("the previous export\n")

    def disk_full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(memory_export_command.os, "fsync", disk_full)
    with pytest.raises(
        CommandError, match=r"Could not write .*: No space left on device\. Nothing was replaced\."
    ):
        call_command("memory_export", "-o", str(path), stderr=io.StringIO())
    assert path.read_text() == "the previous export\n"
    assert [p.name for p in tmp_path.iterdir()] == ["memory.jsonl"]


def test_an_export_into_a_missing_folder_or_onto_a_folder_is_refused(world, tmp_path):
    with pytest.raises(CommandError, match="is not a directory; create it first"):
        call_command("memory_export", "-o", str(tmp_path / "nope" / "out.jsonl"))
    with pytest.raises(CommandError, match="is a directory; name the file to write"):
        call_command("memory_export", "-o", str(tmp_path))


def test_an_export_to_a_reader_that_left_early_ends_quietly_and_fails(world, monkeypatch):
    """`memory_export | head -1`: no traceback, and a status that says the
    export did not finish (as a writer the pipe's signal stopped)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    with os.fdopen(write_end, "w", encoding="utf-8") as pipe:
        monkeypatch.setattr(sys, "stdout", pipe)
        errors = io.StringIO()
        with pytest.raises(SystemExit) as stopped:
            call_command("memory_export", stderr=errors)
    assert stopped.value.code == 128 + signal.SIGPIPE
    assert errors.getvalue() == ""
