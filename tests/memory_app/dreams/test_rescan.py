"""The rescan job: text the scanner now refuses goes to a curator, once."""

import pytest
from django.db import transaction

from memory_app.dreams.runner import dream_execute
from memory_app.models import DreamJob, DreamReviewItem, MemoryDocument, Trust
from memory_app.services.delete import deletion_decide
from memory_app.services.documents import document_create, head_update
from memory_app.services.versions import SourceRef
from tests.factories import WorkspaceStoreFactory
from tests.memory_app.dreams.test_usage_feedback import inject

pytestmark = pytest.mark.django_db

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
EARLIER_RULES = "2025.01.0"


def run(kind: str = "rescan") -> DreamJob:
    return dream_execute(DreamJob.objects.create(kind=kind).pk)


def state(document) -> str:
    return MemoryDocument.objects.get(pk=document.pk).state


def pending_flags():
    return DreamReviewItem.objects.filter(action="tombstone", status="pending")


@pytest.fixture
def leaked(owner):
    """A reviewed runbook that earlier rules let through with a token in it."""
    return document_create(
        store=WorkspaceStoreFactory(slug="ops"),
        path="ci/token",
        title="ci token",
        content=f"The CI token is {TOKEN}.",
        trust=Trust.ADMIN_APPROVED,
        author=owner,
        scanner_version=EARLIER_RULES,
    )


def edit(document, content: str) -> None:
    """A curator's later edit, which keeps the token."""
    with transaction.atomic():
        locked = MemoryDocument.objects.select_for_update().get(pk=document.pk)
        head_update(locked, change="update", author=None, fields={"content": content})


@pytest.mark.parametrize(
    "where",
    [
        {"tags": ["ci", TOKEN]},
        {"entities": {"service": "ci", "resource": TOKEN}},
        {"source_refs": [SourceRef("url", f"https://ci.example.com/login?token={TOKEN}")]},
    ],
    ids=["tag", "entity", "source_ref"],
)
def test_rescan_reads_every_field_a_write_is_scanned_on(owner, where):
    """A write with the token in a tag, an entity or a source ref is
    refused; a rescan must catch what older rules let through there too."""
    document = document_create(
        store=WorkspaceStoreFactory(slug="ops"),
        path="ci/login",
        title="ci login",
        content="Log in to CI with the token from the vault.",
        trust=Trust.ADMIN_APPROVED,
        author=owner,
        scanner_version=EARLIER_RULES,
        **where,
    )
    job = run()
    assert job.stats["flagged"] == 1
    item = pending_flags().get()
    assert item.source_document_id == document.pk
    assert "github" in item.rationale.lower() and TOKEN not in item.rationale
    assert state(document) == "constrained"


def test_a_flag_a_curator_declined_is_not_raised_again_until_the_text_changes(leaked, reviewer):
    assert run().stats["flagged"] == 1
    deletion_decide(
        user=reviewer, item=pending_flags().get(), confirm=False, note="A revoked sample token."
    )
    assert state(leaked) == "active"

    again = run()
    assert again.stats["flagged"] == 0 and again.stats["already_decided"] == 1
    assert not pending_flags().exists()
    assert state(leaked) == "active"

    edit(leaked, f"The CI token is {TOKEN}; it is rotated monthly.")
    assert run().stats["flagged"] == 1
    assert state(leaked) == "constrained"


def test_a_flag_naming_a_detector_the_decided_one_did_not_is_a_new_question(leaked, reviewer):
    """Declined when the rules of the day matched something else: the
    curator has not answered for the token the rules now find."""
    run()
    item = pending_flags().get()
    deletion_decide(user=reviewer, item=item, confirm=False, note="Not a secret.")
    DreamReviewItem.objects.filter(pk=item.pk).update(
        findings=[{"detector": "jwt", "field": "content", "start": 0, "end": 9, "blocking": True}]
    )
    assert run().stats["flagged"] == 1
    assert state(leaked) == "constrained"


def test_a_declined_usage_review_does_not_silence_a_scanner_flag(leaked, owner, reviewer, settings):
    """Keeping a memory nobody cites says nothing about the secret in it."""
    settings.MEMORY_USAGE_INJECTED_MIN = 2
    inject(leaked, owner, times=2)
    assert run("usage").stats["proposed"] == 1
    deletion_decide(user=reviewer, item=pending_flags().get(), confirm=False, note="Keep it.")

    job = run()
    assert job.stats["flagged"] == 1 and job.stats["already_decided"] == 0
    assert "github" in pending_flags().get().rationale.lower()
    assert state(leaked) == "constrained"
