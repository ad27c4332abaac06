import io
import re

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from memory_app.actors import actor_for
from memory_app.embeddings import (
    MiniLMBackend,
    ParallelEmbedder,
    document_text,
    embed_text,
    get_backend,
)
from memory_app.management.commands.memory_embed import readable_duration
from memory_app.models import MemoryDocument
from memory_app.selectors.search import memory_search
from memory_app.services.embedding_backfill import (
    document_embed,
    embeddings_backfill,
    embeddings_write,
)
from tests.factories import UserFactory, WorkspaceStoreFactory, make_document

pytestmark = pytest.mark.django_db


def _without_embedding(store, path, content):
    document = make_document(store, path=path, content=content, embedding=None)
    assert document.embedding is None
    return document


def test_backfill_embeds_missing_and_outdated_documents():
    store = WorkspaceStoreFactory()
    missing = _without_embedding(store, "a", "Kafka consumer lag runbook")
    outdated = make_document(store, path="b", content="Redis evictions")
    MemoryDocument.objects.filter(pk=outdated.pk).update(embedding_model="an-older-model")
    fresh = make_document(store, path="c", content="DNS timeouts")
    assert embeddings_backfill(batch_size=1) >= 2
    for document in (missing, outdated, fresh):
        document.refresh_from_db()
        assert document.embedding is not None
        assert document.embedding_model == "all-MiniLM-L6-v2-onnx-int8-w8a8"
    expected = embed_text("a\nKafka consumer lag runbook")
    assert float(expected @ missing.embedding) == pytest.approx(1.0, abs=1e-4)


def test_embedding_one_document_is_idempotent():
    document = _without_embedding(WorkspaceStoreFactory(), "a", "Kafka consumer lag runbook")
    assert document_embed(document_id=document.pk) is True
    assert document_embed(document_id=document.pk) is False


def test_a_vanished_document_is_skipped():
    assert document_embed(document_id="00000000-0000-0000-0000-000000000000") is False


def test_the_command_reports_what_it_did():
    _without_embedding(WorkspaceStoreFactory(), "a", "Kafka consumer lag runbook")
    out = io.StringIO()
    call_command("memory_embed", stdout=out)
    assert out.getvalue().startswith("embedded ")
    assert not MemoryDocument.objects.filter(embedding__isnull=True).exists()


@pytest.mark.parametrize("workers", ["1", "2"])
def test_the_command_reembeds_in_batches_with_progress(workers):
    store = WorkspaceStoreFactory()
    documents = [
        _without_embedding(store, f"n{n}", f"Note number {n} about {'long ' * n}things")
        for n in range(5)
    ]
    out = io.StringIO()
    call_command("memory_embed", "--batch-size", "2", "--workers", workers, stdout=out)
    lines = out.getvalue().splitlines()
    assert [line.split(" (")[0] for line in lines[:3]] == [
        "embedded 2 of 5",
        "embedded 4 of 5",
        "embedded 5 of 5",
    ]
    # Each line says how fast it goes and how long is left.
    assert re.fullmatch(r"embedded 2 of 5 \(\d+ documents/s, \d+ s left\)", lines[0])
    assert lines[2].endswith(", 0 s left)")
    assert lines[-1] == "embedded 5 documents"
    for document in documents:
        document.refresh_from_db()
        alone = embed_text(document_text(document.title, "", document.content))
        assert float(alone @ document.embedding) > 0.999


def test_the_command_refuses_no_workers():
    with pytest.raises(CommandError, match="--workers must be at least 1"):
        call_command("memory_embed", "--workers", "0", stdout=io.StringIO())


def test_a_model_failure_keeps_the_batches_written_before_it(monkeypatch):
    store = WorkspaceStoreFactory()
    for n in range(4):
        _without_embedding(store, f"n{n}", f"Note {n} on disk usage")
    backend = get_backend()
    calls = []

    def failing_on_the_second_batch(texts):
        calls.append(texts)
        if len(calls) == 2:
            raise RuntimeError("the model failed")
        return MiniLMBackend.embed(backend, texts)

    monkeypatch.setattr(backend, "embed", failing_on_the_second_batch)
    with pytest.raises(RuntimeError, match="the model failed"):
        embeddings_backfill(batch_size=2, workers=2)
    # The first batch is stored; the second waits for the next run.
    assert MemoryDocument.objects.filter(embedding__isnull=True).count() == 2
    monkeypatch.undo()
    assert embeddings_backfill(batch_size=2) == 2
    assert not MemoryDocument.objects.filter(embedding__isnull=True).exists()


def test_parallel_embedding_gives_each_text_its_own_vector_in_order():
    subjects = [
        "Kafka consumer lag on the orders topic",
        "Redis evictions after the memory limit change",
        "TLS handshakes failing after a certificate renewal",
        "DNS lookups timing out on the build agents",
        "Postgres replication lag past the alert",
        "A cron job that runs twice after a node drain",
        "Disk filling up with write-ahead log segments",
        "The readiness probe failing on slow starts",
    ]
    # Of many lengths, so the texts are split into parts by length, not in order.
    texts = [f"{subject}. {'More detail follows. ' * n}" for n in range(5) for subject in subjects]
    with ParallelEmbedder(get_backend(), workers=2) as embedder:
        vectors = embedder.submit(texts).result()
    alone = get_backend().embed(texts)
    assert vectors.shape == alone.shape == (40, 384)
    assert ((vectors * alone).sum(axis=1) > 0.999).all()
    assert ((vectors @ alone.T).argmax(axis=1) == range(40)).all()


def test_batches_embed_each_text_as_it_would_alone():
    texts = ["short", "a much longer sentence about kafka consumer lag and rebalances", "mid text"]
    together = get_backend().embed(texts)
    for text, row in zip(texts, together, strict=True):
        assert float(row @ get_backend().embed([text])[0]) > 0.999


def test_search_never_compares_a_vector_of_another_model():
    store = WorkspaceStoreFactory()
    document = make_document(
        store,
        path="kafka/lag",
        title="Kafka consumer lag",
        content="Kafka consumer lag grows when a rebalance storm hits; raise session.timeout.ms.",
    )
    MemoryDocument.objects.filter(pk=document.pk).update(embedding_model="an-older-model")
    actor = actor_for(UserFactory(username="reader"))
    # Only meaning can find this one: no word of it is in the memory.
    paraphrase = "messages pile up behind the readers of the event stream"
    assert memory_search(actor=actor, query=paraphrase, mode="semantic") == []
    # Words still find it in hybrid mode, with no semantic score from the old vector.
    (hit,) = memory_search(actor=actor, query="kafka consumer lag", mode="hybrid")
    assert hit.semantic == 0.0
    embeddings_backfill(batch_size=8)
    found = memory_search(actor=actor, query=paraphrase, mode="semantic")
    assert [hit.document.pk for hit in found] == [document.pk]
    (hit,) = memory_search(actor=actor, query="kafka consumer lag", mode="hybrid")
    assert hit.semantic > 0.5


def test_the_command_re_embeds_what_the_float32_graph_embedded():
    # The change of arithmetic is a change of model: the float32 vectors are
    # not compared with integer ones until `memory_embed` has replaced them.
    float32 = MiniLMBackend(integer=False)
    document = make_document(
        WorkspaceStoreFactory(),
        path="kafka/lag",
        title="Kafka consumer lag",
        content="Kafka consumer lag grows when a rebalance storm hits; raise session.timeout.ms.",
    )
    text = document_text(document.title, document.recall_hint, document.content)
    MemoryDocument.objects.filter(pk=document.pk).update(
        embedding=float32.embed([text])[0].tolist(), embedding_model=float32.model_id
    )
    actor = actor_for(UserFactory(username="reader"))
    paraphrase = "messages pile up behind the readers of the event stream"
    assert memory_search(actor=actor, query=paraphrase, mode="semantic") == []

    out = io.StringIO()
    call_command("memory_embed", stdout=out)

    assert out.getvalue().splitlines()[-1] == "embedded 1 documents"
    document.refresh_from_db()
    assert document.embedding_model == get_backend().model_id != float32.model_id
    assert float(embed_text(text) @ document.embedding) == pytest.approx(1.0, abs=1e-4)
    found = memory_search(actor=actor, query=paraphrase, mode="semantic")
    assert [hit.document.pk for hit in found] == [document.pk]


def test_a_re_embed_writes_each_batch_in_one_statement(django_assert_num_queries):
    store = WorkspaceStoreFactory()
    documents = [
        make_document(store, path=f"n{n}", content=f"Note {n} on disk usage") for n in range(5)
    ]
    MemoryDocument.objects.filter(store=store).update(embedding_model="an-older-model")
    lines = []
    # The count, then a read and a write per batch of two, then the empty read.
    with django_assert_num_queries(1 + 3 * 2 + 1):
        done = embeddings_backfill(batch_size=2, progress=lambda d, t: lines.append((d, t)))
    assert done == 5
    assert lines == [(2, 5), (4, 5), (5, 5)]
    for document in documents:
        document.refresh_from_db()
        assert document.embedding_model == get_backend().model_id
        expected = embed_text(f"{document.title}\n{document.content}")
        assert float(expected @ document.embedding) == pytest.approx(1.0, abs=1e-4)


def test_a_document_changed_after_it_was_read_keeps_its_newer_state():
    document = _without_embedding(WorkspaceStoreFactory(), "a", "Kafka consumer lag runbook")
    stale = MemoryDocument.objects.get(pk=document.pk)
    MemoryDocument.objects.filter(pk=document.pk).update(content_sha256="0" * 64)
    assert embeddings_write([stale], get_backend().embed(["x"]), get_backend().model_id) == 0
    document.refresh_from_db()
    assert document.embedding is None


@pytest.mark.parametrize(
    ("seconds", "said"),
    [(0.4, "0 s"), (45, "45 s"), (59.6, "1 min"), (725, "12 min"), (7500, "2 h 5 min")],
)
def test_the_time_left_reads_as_a_person_says_it(seconds, said):
    assert readable_duration(seconds) == said


def _missing_vectors_share() -> float:
    """The share of documents without a vector, as the planner's statistics say."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT null_frac FROM pg_stats WHERE tablename = %s AND attname = 'embedding'",
            [MemoryDocument._meta.db_table],
        )
        return cursor.fetchone()[0]


def test_the_command_leaves_the_planner_counting_the_new_vectors():
    store = WorkspaceStoreFactory()
    for n in range(6):
        _without_embedding(store, f"n{n}", f"Note {n} on disk usage")
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {MemoryDocument._meta.db_table}")
    assert _missing_vectors_share() > 0.5
    call_command("memory_embed", stdout=io.StringIO())
    # Counted again at once: the duplicate check and the semantic list then
    # plan on the HNSW index, which they would not while the statistics say
    # that no document has a vector.
    assert _missing_vectors_share() == 0.0
