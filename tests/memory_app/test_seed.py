import pytest
from django.core.management import call_command

from memory_app.models import MemoryDocument, MemoryStore, MemoryVersion
from memory_app.services.seed import CONVENTIONS, memory_seed

pytestmark = pytest.mark.django_db


def _snapshot():
    return (
        sorted(MemoryStore.objects.values_list("slug", "scope")),
        sorted(
            MemoryDocument.objects.values_list("store__slug", "path", "version", "content_sha256")
        ),
        MemoryVersion.objects.count(),
    )


def test_migrating_seeds_the_workspace_stores_and_conventions():
    slugs = set(MemoryStore.objects.values_list("slug", flat=True))
    assert {"workspace_conventions", "workspace_runbooks"} <= slugs
    documents = MemoryDocument.objects.filter(store__slug="workspace_conventions")
    assert {d.path for d in documents} == {
        "verification-policy",
        "mutation-approval-policy",
        "memory-write-policy",
        "advisory-memory-disclaimer",
    }
    for document in documents:
        assert document.trust == "system_seeded"
        assert document.version == 1
        assert document.state == "active"
        assert document.content.strip()
        assert document.versions.get().author_name == "system"


def test_seeding_again_changes_nothing():
    before = _snapshot()
    assert memory_seed().created == []
    call_command("seed_memory")
    assert _snapshot() == before


def test_seeding_again_keeps_a_reviewers_edit():
    kept = MemoryDocument.objects.get(path="verification-policy")
    MemoryDocument.objects.filter(pk=kept.pk).update(title="Edited by a reviewer")
    report = memory_seed()
    assert report.created == []
    kept.refresh_from_db()
    assert kept.title == "Edited by a reviewer"


def test_every_seed_document_ships_content():
    for seed in CONVENTIONS:
        assert len(seed.content) > 100
