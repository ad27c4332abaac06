"""The lexical index (DocumentTerms) follows every change of a document, as
a text search sees it; PostgreSQL keeps it, so the ORM, raw SQL and bulk
inserts are all covered."""

import importlib
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from memory_app.models import DocState, DocumentTerms, MemoryDocument, Trust
from memory_app.services.documents import head_update
from tests.factories import make_document

pytestmark = pytest.mark.django_db

MIGRATION = importlib.import_module("memory_app.migrations.0012_document_terms")


def _found(tools, query: str, **filters) -> list[str]:
    body = tools.ok("memory_search", {"query": query, "mode": "text", **filters})
    return [hit["path"] for hit in body["results"]]


@pytest.fixture
def runbook(runbooks):
    return make_document(
        runbooks,
        path="kafka/lag",
        title="Kafka consumer lag",
        recall_hint="When the orders topic falls behind.",
        content="Scale the consumers to the partition count after a rebalance storm.",
        trust=Trust.ADMIN_APPROVED,
        doc_type="runbook",
        tags=["kafka"],
    )


def test_a_new_document_is_found_by_its_title_hint_and_content(tools, runbook):
    for query in ("kafka consumer", "orders topic", "rebalance storm"):
        assert _found(tools, query) == ["kafka/lag"], query


def test_an_edit_is_found_by_its_new_words_and_no_longer_by_the_old(tools, runbook):
    head_update(
        runbook,
        change="update",
        author=None,
        fields={"content": "Raise session.timeout.ms when heartbeats are missed."},
    )
    assert _found(tools, "rebalance storm") == []
    assert _found(tools, "heartbeats missed") == ["kafka/lag"]


def test_filters_follow_a_change_of_tags_type_and_trust(tools, runbook):
    assert _found(tools, "kafka consumer", tags=["kafka"], doc_types=["runbook"]) == ["kafka/lag"]
    MemoryDocument.objects.filter(pk=runbook.pk).update(
        tags=["streaming"], doc_type="note", trust=Trust.AGENT_DRAFT
    )
    assert _found(tools, "kafka consumer", tags=["kafka"]) == []
    assert _found(tools, "kafka consumer", doc_types=["runbook"]) == []
    assert _found(tools, "kafka consumer", tags=["streaming"]) == ["kafka/lag"]
    assert _found(tools, "kafka consumer", include_drafts=False) == []


def test_a_document_that_leaves_the_live_states_or_expires_is_not_found(tools, runbook):
    MemoryDocument.objects.filter(pk=runbook.pk).update(state=DocState.TOMBSTONED)
    assert _found(tools, "kafka consumer") == []
    MemoryDocument.objects.filter(pk=runbook.pk).update(state=DocState.ACTIVE)
    assert _found(tools, "kafka consumer") == ["kafka/lag"]
    MemoryDocument.objects.filter(pk=runbook.pk).update(
        expires_at=timezone.now() - timedelta(minutes=1)
    )
    assert _found(tools, "kafka consumer") == []


def test_a_bulk_insert_is_indexed_and_a_deleted_row_takes_its_index_row(tools, runbooks):
    (bare,) = MemoryDocument.objects.bulk_create(
        [
            MemoryDocument(
                store=runbooks,
                path="dns/timeouts",
                title="DNS timeouts",
                content="Switch pods to the node-local DNS cache.",
                content_sha256="0" * 64,
                trust=Trust.ADMIN_APPROVED,
            )
        ]
    )
    assert _found(tools, "node-local cache") == ["dns/timeouts"]
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM memory_app_memorydocument WHERE id = %s", [bare.pk])
    assert not DocumentTerms.objects.filter(document_id=bare.pk).exists()


def test_a_hit_count_leaves_the_index_row_untouched(runbook):
    """Reads bump counters on every serve; they must not rewrite the index."""

    def row_version():
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT xmin::text FROM memory_app_documentterms WHERE id = %s", [runbook.pk]
            )
            return cursor.fetchone()[0]

    before = row_version()
    MemoryDocument.objects.filter(pk=runbook.pk).update(hit_count=7, last_used_at=timezone.now())
    assert row_version() == before


def test_the_migration_indexes_documents_written_before_it(tools, runbook):
    DocumentTerms.objects.all().delete()
    assert _found(tools, "kafka consumer") == []
    with connection.cursor() as cursor:
        cursor.execute(MIGRATION.BACKFILL)
    assert _found(tools, "kafka consumer") == ["kafka/lag"]
