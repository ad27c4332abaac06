"""System cards and My memories from the outside: who gets 200, 403 or 404
on every page, fragment and action, and what each action leaves behind."""

import pytest
from django.contrib.auth.models import Group

from memory_app.models import (
    GroupMemoryPolicy,
    MemoryDocument,
    MemoryStore,
    MemoryVersion,
    System,
    SystemGrant,
)
from memory_app.services.principals import system_grant_set
from memory_app.services.stores import store_for_user
from tests.factories import UserFactory, make_document

pytestmark = pytest.mark.django_db

XSS = "<img src=x onerror=alert(1)><script>alert(2)</script>"
TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


@pytest.fixture
def ledger(db):
    read = system_grant_set(system_slug="ledger", team="ledger-readers", level="read")
    system_grant_set(system_slug="ledger", team="ledger-owners", level="manage")
    store = read.system.store
    note = make_document(store, "facts/owner", "The ledger team owns it.", trust="user_authored")
    return store, note


@pytest.fixture
def cast(db, outsider, reviewer):
    return {
        "reader": UserFactory(username="reader", teams=["ledger-readers"]),
        "manager": UserFactory(username="manager", teams=["ledger-owners"]),
        "outsider": outsider,
        "reviewer": reviewer,
        "staff": UserFactory(username="root", is_superuser=True),
    }


MATRIX = [
    # who, card, add, pin
    ("reader", 200, 403, 403),
    ("manager", 200, 302, 302),
    ("outsider", 404, 404, 404),
    ("reviewer", 404, 404, 404),
    ("staff", 404, 404, 404),
]


@pytest.mark.parametrize(("who", "card", "add", "pin"), MATRIX)
def test_the_system_card_access_matrix(client, ledger, cast, who, card, add, pin):
    store, note = ledger
    client.force_login(cast[who])
    assert client.get("/systems/ledger/").status_code == card
    fragment = client.get("/systems/ledger/", {"page": 1}, headers={"HX-Request": "true"})
    assert fragment.status_code == card
    added = client.post("/systems/ledger/add", {"title": "Pager", "content": "Page #ledger."})
    assert added.status_code == add
    assert MemoryDocument.objects.filter(store=store, title="Pager").exists() == (add == 302)
    pinned = client.post(f"/systems/ledger/{note.pk}/", {"action": "pin"})
    assert pinned.status_code == pin
    note.refresh_from_db()
    assert note.always_inject == (pin == 302)


def test_the_list_shows_only_readable_systems(client, ledger, cast):
    system_grant_set(system_slug="secret", team="others", level="read")
    client.force_login(cast["reader"])
    html = client.get("/systems/").content.decode()
    assert "ledger" in html and "secret" not in html
    client.force_login(cast["outsider"])
    assert "None of your teams has a grant" in client.get("/systems/").content.decode()


def test_the_empty_list_links_teams_for_staff_only(client, cast):
    client.force_login(cast["outsider"])
    html = client.get("/systems/").content.decode()
    assert "Staff grant them under Teams." in html
    assert 'href="/teams/"' not in html
    client.force_login(cast["staff"])
    html = client.get("/systems/").content.decode()
    assert 'Staff grant them under <a href="/teams/">Teams</a>.' in html


def test_a_reviewer_reading_a_system_is_listed_as_managing_it_as_the_card_offers(
    client, ledger, cast
):
    """Reviewers change any store's documents; the list says so, as the card
    does, whatever their team's grant."""
    reviewer = UserFactory(username="rev-reader", teams=["ledger-readers"], reviewer=True)
    client.force_login(reviewer)
    assert "<td>manage</td>" in _ledger_row(client)
    assert "Add a memory" in client.get("/systems/ledger/").content.decode()
    client.force_login(cast["reader"])
    assert "<td>read</td>" in _ledger_row(client)


def _ledger_row(client) -> str:
    """The ledger system's row of the systems list."""
    return client.get("/systems/").content.decode().split("ledger", 1)[1].split("</tr>")[0]


def test_readers_see_no_manage_actions(client, ledger, cast):
    client.force_login(cast["reader"])
    html = client.get("/systems/ledger/").content.decode()
    assert "The ledger team owns it." in html
    assert "Add a memory" not in html and 'value="pin"' not in html
    client.force_login(cast["manager"])
    html = client.get("/systems/ledger/").content.decode()
    assert "Add a memory" in html and 'value="pin"' in html


def test_a_manager_edits_and_deletes_as_new_versions(client, ledger, cast):
    _, note = ledger
    client.force_login(cast["manager"])
    client.post(
        f"/systems/ledger/{note.pk}/",
        {
            "action": "edit",
            "base_version": "1",
            "title": "Owner",
            "content": "The ledger-owners team owns it.",
        },
    )
    client.post(f"/systems/ledger/{note.pk}/", {"action": "tombstone", "confirm": "on"})
    note.refresh_from_db()
    assert note.state == "tombstoned" and note.version == 3
    changes = list(note.versions.order_by("version").values_list("change", "author_name"))
    assert changes[1:] == [("update", "manager"), ("tombstone", "manager")]


def test_a_human_write_is_scanned_and_refused_whole(client, ledger, cast):
    store, _ = ledger
    client.force_login(cast["manager"])
    response = client.post(
        "/systems/ledger/add", {"title": "CI", "content": f"token {TOKEN}"}, follow=True
    )
    assert response.status_code == 422
    assert "safety scanner found a github" in response.content.decode()
    assert TOKEN not in response.content.decode()
    assert not MemoryDocument.objects.filter(store=store, title="CI").exists()


def test_memory_content_is_escaped_on_the_card(client, ledger, cast):
    store, _ = ledger
    make_document(store, "notes/xss", XSS, title=XSS)
    client.force_login(cast["reader"])
    html = client.get("/systems/ledger/").content.decode()
    assert "<script>alert(2)</script>" not in html
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in html


def test_a_memory_of_another_card_is_404(client, ledger, cast):
    other = system_grant_set(system_slug="billing", team="ledger-owners", level="manage")
    foreign = make_document(other.system.store, "facts/x", "Billing fact.")
    client.force_login(cast["manager"])
    assert client.post(f"/systems/ledger/{foreign.pk}/", {"action": "pin"}).status_code == 404


def test_revoking_read_hides_systems_and_manage_hides_actions(client, ledger, cast):
    GroupMemoryPolicy.objects.create(
        group=Group.objects.get(name="ledger-owners"), can_manage_memory=False
    )
    client.force_login(cast["manager"])
    html = client.get("/systems/ledger/").content.decode()
    assert "Add a memory" not in html
    assert client.post("/systems/ledger/add", {"title": "a", "content": "b"}).status_code == 403
    GroupMemoryPolicy.objects.create(
        group=Group.objects.get(name="ledger-readers"), can_read_memory=False
    )
    client.force_login(cast["reader"])
    assert client.get("/systems/ledger/").status_code == 404


def test_the_card_is_bounded_in_queries_with_1000_memories(
    client, ledger, cast, django_assert_max_num_queries
):
    store, _ = ledger
    for n in range(1000):
        make_document(store, f"bulk/{n:04d}", f"Fact {n}.", embedding=None)
    client.force_login(cast["manager"])
    with django_assert_max_num_queries(10):
        response = client.get("/systems/ledger/")
    assert response.content.decode().count('class="item memory"') == 50
    assert "Page 1 of 21" in response.content.decode()


# My memories ------------------------------------------------------------------


@pytest.fixture
def preferences(owner):
    store = store_for_user(user=owner)
    agent = UserFactory(username="helper-agent", service_account=True, act_on_behalf=True)
    mine = make_document(store, "prefs/editor", "Prefers vim.", author=owner)
    saved = make_document(store, "prefs/tz", "Works in CET.", author=agent, run_id="run-42")
    return mine, saved


def test_my_memories_show_what_agents_saved_and_from_where(client, owner, preferences):
    client.force_login(owner)
    html = client.get("/mine/").content.decode()
    assert "Prefers vim." in html and "Works in CET." in html
    assert "saved by helper-agent in run <code>run-42</code>" in html
    assert html.count("saved by") == 1


def test_my_memories_actions(client, owner, preferences):
    mine, _ = preferences
    client.force_login(owner)
    client.post(f"/mine/{mine.pk}/", {"action": "pin"})
    client.post(
        f"/mine/{mine.pk}/",
        {"action": "edit", "base_version": "1", "title": "editor", "content": "Prefers neovim."},
    )
    mine.refresh_from_db()
    assert mine.always_inject and mine.content == "Prefers neovim." and mine.version == 2
    client.post(f"/mine/{mine.pk}/", {"action": "tombstone", "confirm": "on"})
    mine.refresh_from_db()
    assert mine.state == "tombstoned"
    client.post("/mine/add", {"title": "Shell", "content": "Uses fish."})
    added = MemoryDocument.objects.get(title="Shell")
    assert added.store.owner == owner and added.doc_type == "user_preference"
    assert added.trust == "user_authored"


def test_nobody_else_reaches_my_memories(client, owner, teammate, preferences):
    mine, _ = preferences
    client.force_login(teammate)
    assert "Prefers vim." not in client.get("/mine/").content.decode()
    assert client.post(f"/mine/{mine.pk}/", {"action": "tombstone"}).status_code == 404
    mine.refresh_from_db()
    assert mine.state == "active"


def test_bad_actions_are_messages_not_errors(client, owner, preferences):
    mine, _ = preferences
    client.force_login(owner)
    for data, status in (({"action": "explode"}, 200), ({"action": "edit"}, 400), ({}, 200)):
        response = client.post(f"/mine/{mine.pk}/", data, follow=True)
        assert response.status_code == status
    assert MemoryVersion.objects.filter(document=mine).count() == 1


def test_my_memories_are_bounded_in_queries_with_1000_rows(
    client, owner, django_assert_max_num_queries
):
    store = store_for_user(user=owner)
    for n in range(1000):
        make_document(store, f"prefs/{n:04d}", f"Preference {n}.", embedding=None)
    client.force_login(owner)
    with django_assert_max_num_queries(12):
        response = client.get("/mine/")
    assert response.content.decode().count('class="item memory"') == 50


def test_my_memories_open_on_the_first_page_for_a_page_below_one(client, owner):
    store = store_for_user(user=owner)
    for n in range(60):
        make_document(store, f"prefs/{n:02d}", f"Preference {n}.", embedding=None)
    client.force_login(owner)
    for number in ("0", "-5"):
        assert "Page 1 of 2" in client.get("/mine/", {"page": number}).content.decode()
    assert "Page 2 of 2" in client.get("/mine/", {"page": "7"}).content.decode()


def test_the_card_tells_only_live_memory_and_the_list_counts_the_same(client, ledger, cast):
    store, _ = ledger
    make_document(store, "facts/deploys", "Deploys go out at 10:00.")
    gone = make_document(store, "facts/old-owner", "The platform team owns it.")
    client.force_login(cast["manager"])
    client.post(f"/systems/ledger/{gone.pk}/", {"action": "tombstone", "confirm": "on"})
    card = client.get("/systems/ledger/").content.decode()
    assert card.count('class="item memory"') == 2
    assert "The platform team owns it." not in card
    assert f'href="/browser/?store={store.pk}&amp;state=tombstoned"' in card
    listing = client.get("/systems/").content.decode()
    assert '<td class="num">2</td>' in listing


def test_a_system_made_without_a_store_has_an_empty_card(client, cast):
    """As the admin made them: a system row and a grant, no store."""
    system = System.objects.create(slug="billing", name="Billing")
    SystemGrant.objects.create(
        system=system, team=Group.objects.get_or_create(name="ledger-readers")[0], level="read"
    )
    client.force_login(cast["reader"])
    assert 'href="/systems/billing/"' in client.get("/systems/").content.decode()
    response = client.get("/systems/billing/")
    assert response.status_code == 200
    assert "No memory about this system yet." in response.content.decode()


def _admin_adds_system(client, slug: str):
    """The Django admin's add form for a System, with no grant rows."""
    return client.post(
        "/admin/memory_app/system/add/",
        {
            "slug": slug,
            "name": "Billing",
            "description": "",
            "grants-TOTAL_FORMS": "0",
            "grants-INITIAL_FORMS": "0",
        },
    )


def test_the_admin_makes_a_system_with_its_store(client, cast):
    client.force_login(cast["staff"])
    response = _admin_adds_system(client, "billing")
    assert response.status_code == 302, response.content.decode()[:2000]
    assert MemoryStore.objects.filter(system__slug="billing", slug="system-billing").exists()


def test_the_admin_refuses_a_slug_the_store_would_refuse(client, cast):
    client.force_login(cast["staff"])
    response = _admin_adds_system(client, "Billing-API")
    assert response.status_code == 200
    assert "Lowercase letters, digits" in response.content.decode()
    assert not System.objects.exists()


def test_read_switched_off_is_said_on_the_systems_page(client, ledger, cast):
    GroupMemoryPolicy.objects.create(
        group=Group.objects.get(name="ledger-readers"), can_read_memory=False
    )
    client.force_login(cast["reader"])
    html = client.get("/systems/").content.decode()
    assert "Your access to memory has been turned off by an administrator." in html
    assert "None of your teams has a grant" not in html
