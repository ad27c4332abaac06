"""The canary tells the app's own writes from retrieval drift, and a
proposal's documents are constrained with it or not at all."""

import pytest

from memory_app.dreams import proposals
from memory_app.dreams.runner import dream_execute
from memory_app.models import DreamJob, DreamReviewItem, MemoryDocument
from memory_app.services.constrain import documents_constrain
from memory_app.services.embedding_backfill import embeddings_backfill
from tests.factories import WorkspaceStoreFactory, make_document

pytestmark = pytest.mark.django_db

TEXT = "To restart payments, roll back the configmap and restart the deployment in prod."


def run(kind: str) -> DreamJob:
    return dream_execute(DreamJob.objects.create(kind=kind).pk)


@pytest.fixture
def runbooks():
    store = WorkspaceStoreFactory(slug="canary")
    for n in range(4):
        make_document(store, f"runbooks/r{n}", f"Roll back a bad deploy, variant {n}.")
    make_document(store, "runbooks/revert", "Revert the release when the rollout goes wrong.")
    return store


def test_embeddings_written_since_the_last_run_are_not_drift(runbooks):
    MemoryDocument.objects.filter(store=runbooks).update(embedding=None, embedding_model="")
    before = run("canary")
    assert embeddings_backfill(limit=100) == 5
    after = run("canary")
    assert after.stats["results"] != before.stats["results"]
    assert after.stats["drift"] == []


def test_documents_constrained_since_the_last_run_are_not_drift(runbooks):
    before = run("canary")
    top = before.stats["results"]["canary"]["how do we roll back a bad deploy"][0]
    documents_constrain(MemoryDocument.objects.filter(pk=top))
    after = run("canary")
    assert after.stats["results"] != before.stats["results"]
    assert after.stats["drift"] == []


@pytest.fixture
def twins():
    store = WorkspaceStoreFactory(slug="dups")
    keeper = make_document(
        store, "runbooks/a", TEXT, title="Restart payments", trust="admin_approved"
    )
    twin = make_document(
        store, "runbooks/b", TEXT + "\nCheck the errors after.", title="Restart payments"
    )
    return keeper, twin


def states(*documents) -> list[str]:
    return [MemoryDocument.objects.get(pk=d.pk).state for d in documents]


def test_a_merge_whose_documents_cannot_be_constrained_is_not_left_open(twins, monkeypatch):
    def fail(documents):
        raise RuntimeError("connection lost")

    monkeypatch.setattr(proposals, "documents_constrain", fail)
    with pytest.raises(RuntimeError):
        run("compact")
    assert not DreamReviewItem.objects.filter(action="merge").exists()
    assert states(*twins) == ["active", "active"]


def test_a_rerun_constrains_an_open_merge_an_earlier_run_left_active(twins):
    run("compact")
    MemoryDocument.objects.filter(pk__in=[d.pk for d in twins]).update(state="active")
    assert run("compact").stats["proposed"] == 0
    assert DreamReviewItem.objects.filter(action="merge").count() == 1
    assert states(*twins) == ["constrained", "constrained"]


def test_a_rerun_constrains_an_open_contradictions_draft_left_active(contradiction):
    reviewed, draft = contradiction
    run("contradictions")
    MemoryDocument.objects.filter(pk=draft.pk).update(state="active")
    run("contradictions")
    assert DreamReviewItem.objects.filter(action="supersede").count() == 1
    assert states(draft, reviewed) == ["constrained", "active"]
