"""What page writes leave behind and how cards show memory: reasons as given
(none made up), stores named as the API names them, Markdown rendered with
its source a click away, and a rollback that keeps the reason typed."""

import pytest

from memory_app.models import MemoryDocument, MemoryEvent
from memory_app.services.principals import system_grant_set
from memory_app.services.stores import store_for_user
from tests.factories import UserFactory, make_document

pytestmark = pytest.mark.django_db


@pytest.fixture
def payments(db):
    """The payments-api card, managed by `manager`, with one note."""
    grant = system_grant_set(system_slug="payments-api", team="payments", level="manage")
    manager = UserFactory(username="manager", teams=["payments"])
    note = make_document(grant.system.store, "facts/owner", "Owned by **payments**.")
    return manager, note


def _written(path: str) -> dict:
    return MemoryEvent.objects.get(type="memory.document.written", payload__path=path).payload


def test_deleting_and_restoring_from_a_card_records_no_made_up_reason(client, payments):
    manager, note = payments
    client.force_login(manager)
    client.post(f"/systems/payments-api/{note.pk}/", {"action": "tombstone", "confirm": "on"})
    client.post(f"/systems/payments-api/{note.pk}/", {"action": "restore"})
    reasons = list(note.versions.order_by("version").values_list("reason", flat=True))
    assert reasons[1:] == ["", ""]
    kinds = ["memory.document.tombstoned", "memory.document.restored"]
    events = MemoryEvent.objects.filter(document=note, type__in=kinds)
    assert [event.payload["reason"] for event in events.order_by("id")] == ["", ""]


def test_deleting_from_my_memories_records_no_made_up_reason(client, owner):
    mine = make_document(store_for_user(user=owner), "prefs/editor", "Prefers vim.", author=owner)
    client.force_login(owner)
    client.post(f"/mine/{mine.pk}/", {"action": "tombstone", "confirm": "on"})
    assert mine.versions.get(version=2).reason == ""
    event = MemoryEvent.objects.get(document=mine, type="memory.document.tombstoned")
    assert event.payload["reason"] == ""


def test_page_writes_name_stores_as_the_api_does(client, payments, owner):
    manager, _ = payments
    client.force_login(manager)
    client.post("/systems/payments-api/add", {"title": "Pager", "content": "Page #payments."})
    client.force_login(owner)
    client.post("/mine/add", {"title": "Shell", "content": "Uses fish."})
    card = MemoryDocument.objects.get(title="Pager")
    mine = MemoryDocument.objects.get(title="Shell")
    assert _written(card.path)["store"] == "system:payments-api"
    assert _written(mine.path)["store"] == "user:owner"


def test_the_card_and_my_memories_render_markdown_with_the_source_a_click_away(
    client, payments, owner
):
    manager, _ = payments
    make_document(store_for_user(user=owner), "prefs/editor", "Prefers *vim*.", author=owner)
    client.force_login(manager)
    card = client.get("/systems/payments-api/").content.decode()
    assert "Owned by <strong>payments</strong>." in card
    assert '<pre class="content" data-content-pane="source" hidden>Owned by **payments**.' in card
    assert 'href="?content=source"' in card
    client.force_login(owner)
    mine = client.get("/mine/?content=source").content.decode()
    assert "Prefers <em>vim</em>." in mine
    assert '<pre class="content" data-content-pane="source">Prefers *vim*.' in mine


def test_a_rollback_from_the_history_keeps_the_reason_typed_above(client, payments):
    manager, note = payments
    client.force_login(manager)
    client.post(
        f"/systems/payments-api/{note.pk}/",
        {"action": "edit", "base_version": "1", "title": "owner", "content": "Owned by billing."},
    )
    client.post(
        f"/documents/{note.pk}/curate", {"rollback": "1", "reason": "billing never owned it"}
    )
    note.refresh_from_db()
    assert note.content == "Owned by **payments**."
    assert note.versions.get(version=3).reason == "billing never owned it"


def test_the_rollback_buttons_submit_the_curate_form_with_its_reason(client, payments):
    manager, note = payments
    client.force_login(manager)
    client.post(
        f"/systems/payments-api/{note.pk}/",
        {"action": "edit", "base_version": "1", "title": "owner", "content": "Owned by billing."},
    )
    html = client.get(f"/documents/{note.pk}/").content.decode()
    assert '<form method="post" action="/documents/' in html and 'id="curate-form"' in html
    assert '<input id="reason" name="reason"' in html
    assert '<button form="curate-form" name="rollback" value="1">Roll back to v1</button>' in html
