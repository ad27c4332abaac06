"""People set metadata when they add or edit memory from the pages, and a
reviewer adds reviewed memory to a workspace store from the browser."""

import pytest

from memory_app.models import MemoryDocument, MemorySourceRef
from memory_app.services.principals import system_grant_set
from memory_app.services.stores import store_for_user, store_workspace_ensure
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
FULL = {
    "title": "Ingress restarts",
    "content": "Roll back the configmap.",
    "path": "ingress/restarts",
    "doc_type": "runbook",
    "metadata": "1",
    "recall_hint": "When ingress pods restart.",
    "tags": "ingress, nginx, ingress",
    "entity_service": "ingress-nginx",
    "entity_environment": "prod",
    "importance": "8",
    "expires_at": "2031-01-02T03:04",
    "source_refs": "incident INC-4411\nurl https://wiki.example.com/ingress",
}


@pytest.fixture
def runbooks(db):
    return store_workspace_ensure(slug="workspace_runbooks", name="Runbooks")


def refs(document) -> list[tuple[str, str]]:
    return list(
        MemorySourceRef.objects.filter(
            version__document=document, version__version=document.version
        )
        .order_by("id")
        .values_list("kind", "ref")
    )


def assert_full(document: MemoryDocument) -> None:
    assert document.recall_hint == "When ingress pods restart."
    assert document.tags == ["ingress", "nginx"]
    assert document.entities == {"service": "ingress-nginx", "environment": "prod"}
    assert document.importance == 8
    assert document.expires_at is not None and document.expires_at.year == 2031
    assert refs(document) == [("incident", "INC-4411"), ("url", "https://wiki.example.com/ingress")]


def test_a_reviewer_adds_reviewed_memory_to_a_workspace_store(client, reviewer, runbooks):
    client.force_login(reviewer)
    page = client.get("/browser/", {"store": runbooks.pk}).content.decode()
    assert f'action="/browser/{runbooks.pk}/add"' in page
    response = client.post(f"/browser/{runbooks.pk}/add", FULL)
    assert response.status_code == 302
    document = MemoryDocument.objects.get(store=runbooks, path="ingress/restarts")
    assert document.trust == "admin_approved" and document.doc_type == "runbook"
    assert document.versions.get().author == reviewer
    assert_full(document)


def test_a_plain_user_cannot_add_to_a_workspace_store(client, owner, runbooks):
    client.force_login(owner)
    page = client.get("/browser/", {"store": runbooks.pk}).content.decode()
    assert "/add" not in page
    assert client.post(f"/browser/{runbooks.pk}/add", FULL).status_code == 403
    assert not MemoryDocument.objects.filter(store=runbooks, path="ingress/restarts").exists()


def test_a_store_one_cannot_read_is_404(client, owner, outsider):
    private = store_for_user(user=owner)
    client.force_login(outsider)
    assert client.post(f"/browser/{private.pk}/add", FULL).status_code == 404


def test_a_system_manager_sets_metadata_on_the_card(client, db):
    grant = system_grant_set(system_slug="ledger", team="ledger-owners", level="manage")
    client.force_login(UserFactory(username="manager", teams=["ledger-owners"]))
    assert client.post("/systems/ledger/add", FULL).status_code == 302
    document = MemoryDocument.objects.get(store=grant.system.store, path="ingress/restarts")
    assert document.trust == "user_authored" and document.doc_type == "runbook"
    assert_full(document)


def test_my_memories_take_metadata_and_an_edit_keeps_the_evidence(client, owner):
    client.force_login(owner)
    assert client.post("/mine/add", FULL).status_code == 302
    document = MemoryDocument.objects.get(store=store_for_user(user=owner))
    assert document.doc_type == "user_preference"
    assert_full(document)
    edit = {
        "action": "edit",
        "title": "Ingress restarts",
        "content": "Roll back, then verify.",
        "metadata": "1",
        "tags": "edge",
        "importance": "3",
    }
    client.post(f"/mine/{document.pk}/", edit)
    document.refresh_from_db()
    assert document.version == 2 and document.tags == ["edge"] and document.importance == 3
    assert document.expires_at is None and document.recall_hint == ""
    assert refs(document) == [("incident", "INC-4411"), ("url", "https://wiki.example.com/ingress")]


def test_an_edit_without_the_metadata_block_keeps_the_metadata(client, owner):
    client.force_login(owner)
    client.post("/mine/add", FULL)
    document = MemoryDocument.objects.get(store=store_for_user(user=owner))
    client.post(f"/mine/{document.pk}/", {"action": "edit", "title": "T", "content": "New."})
    document.refresh_from_db()
    assert document.content == "New."
    assert_full(document)


def test_the_edit_form_is_prefilled_with_the_metadata(client, owner):
    client.force_login(owner)
    client.post("/mine/add", {**FULL, "tags": "<b>x</b>, plain"})
    html = client.get("/mine/").content.decode()
    assert 'value="&lt;b&gt;x&lt;/b&gt;, plain"' in html
    assert 'value="ingress-nginx"' in html and 'value="8"' in html


@pytest.mark.parametrize(
    "bad",
    [
        {"importance": "11"},
        {"source_refs": "rumour heard-it"},
        {"source_refs": "url"},
        {"tags": ",".join(f"t{n}" for n in range(21))},
        {"tags": "x" * 65},
        {"entity_service": "s" * 201},
        {"recall_hint": "r" * 1001},
    ],
)
def test_bad_metadata_is_a_message_and_adds_nothing(client, owner, bad):
    client.force_login(owner)
    response = client.post("/mine/add", {**FULL, **bad}, follow=True)
    assert response.status_code == 200
    assert 'class="message error"' in response.content.decode()
    assert not MemoryDocument.objects.filter(store__owner=owner).exists()


@pytest.mark.parametrize(
    "leak",
    [
        {"tags": f"ok, {TOKEN}"},
        {"entity_resource": TOKEN},
        {"source_refs": f"url https://ci.example.com/?t={TOKEN}"},
        {"recall_hint": f"use {TOKEN}"},
    ],
)
def test_a_secret_in_any_metadata_field_is_refused(client, owner, leak):
    client.force_login(owner)
    response = client.post("/mine/add", {**FULL, **leak}, follow=True)
    html = response.content.decode()
    assert "safety scanner refused" in html and TOKEN not in html
    assert not MemoryDocument.objects.filter(store__owner=owner).exists()
