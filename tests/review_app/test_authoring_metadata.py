"""People set metadata when they add or edit memory from the pages, and a
reviewer adds reviewed memory to a workspace store from the browser."""

from datetime import UTC, datetime
from html.parser import HTMLParser

import pytest
from django.utils.timezone import localtime

from memory_app.models import MemoryDocument, MemorySourceRef
from memory_app.services.principals import system_grant_set
from memory_app.services.stores import store_for_user, store_workspace_ensure
from tests.factories import UserFactory, make_document

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
    add_form = page.split(f'action="/browser/{runbooks.pk}/add"')[1].split("</form>")[0]
    assert 'name="doc_type"' in add_form
    response = client.post(f"/browser/{runbooks.pk}/add", FULL)
    assert response.status_code == 302
    document = MemoryDocument.objects.get(store=runbooks, path="ingress/restarts")
    assert document.trust == "admin_approved" and document.doc_type == "runbook"
    assert document.versions.get().author == reviewer
    assert_full(document)


def test_ones_own_store_offers_no_type_it_would_not_keep(client, owner):
    """A user store holds preferences: the add form offers no other type."""
    store = store_for_user(user=owner)
    client.force_login(owner)
    page = client.get("/browser/", {"store": store.pk}).content.decode()
    add_form = page.split(f'action="/browser/{store.pk}/add"')[1].split("</form>")[0]
    assert 'name="doc_type"' not in add_form
    client.post(f"/browser/{store.pk}/add", {**FULL, "doc_type": "runbook"})
    assert MemoryDocument.objects.get(store=store).doc_type == "user_preference"


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
        "base_version": "1",
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
    client.post(
        f"/mine/{document.pk}/",
        {"action": "edit", "base_version": "1", "title": "T", "content": "New."},
    )
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
        {"expires_at": "9999-12-31T23:59:59-14:00"},
        {"expires_at": "2001-01-01T00:00"},
    ],
)
def test_bad_metadata_is_a_message_and_adds_nothing(client, owner, bad):
    client.force_login(owner)
    response = client.post("/mine/add", {**FULL, **bad}, follow=True)
    assert response.status_code == 400
    assert 'class="message error"' in response.content.decode()
    assert not MemoryDocument.objects.filter(store__owner=owner).exists()


def test_refused_metadata_stays_as_typed_with_the_error_under_its_field(client, owner):
    client.force_login(owner)
    response = client.post("/mine/add", {**FULL, "importance": "11", "tags": "<i>x</i>, edge"})
    html = response.content.decode()
    assert response.status_code == 400
    assert '<p class="field-error" id="add-importance-error"><strong>Importance' in html
    assert 'id="add-importance" name="importance" type="number"' in html and 'value="11"' in html
    assert 'value="&lt;i&gt;x&lt;/i&gt;, edge"' in html and 'value="ingress-nginx"' in html
    assert "incident INC-4411\nurl https://wiki.example.com/ingress</textarea>" in html


def test_a_bad_source_ref_is_named_under_the_source_refs(client, owner):
    client.force_login(owner)
    response = client.post("/mine/add", {**FULL, "source_refs": "rumour heard-it"})
    html = response.content.decode()
    assert response.status_code == 400
    assert '<p class="field-error" id="add-source_refs-error"><strong>Source refs:</strong>' in html
    assert "rumour heard-it</textarea>" in html


@pytest.mark.parametrize(
    ("bad", "said"),
    [
        ({"tags": ",".join(f"t{n}" for n in range(30))}, "At most 20 tags, not 30."),
        ({"tags": "ok, " + "x" * 65}, "Tag 2: At most 64 characters."),
        ({"source_refs": "incident INC-1\nrumour heard-it"}, "Line 2, kind: Must be one of "),
        ({"source_refs": "url"}, "Line 1, ref: Must not be empty."),
    ],
)
def test_a_refused_metadata_field_says_where_in_the_words_of_the_form(client, owner, bad, said):
    client.force_login(owner)
    html = client.post("/mine/add", {**FULL, **bad}).content.decode()
    assert said in html
    assert "after validation" not in html and ".0" not in html.split("field-error")[1][:200]


def test_a_refused_edit_keeps_the_typed_metadata(client, owner):
    client.force_login(owner)
    client.post("/mine/add", FULL)
    document = MemoryDocument.objects.get(store=store_for_user(user=owner))
    edit = {"action": "edit", "title": "T", "content": "New.", "metadata": "1"}
    response = client.post(f"/mine/{document.pk}/", {**edit, "tags": "edge", "importance": "-1"})
    html = response.content.decode()
    assert response.status_code == 400
    assert f'id="{document.pk}-importance-error"' in html and 'value="edge"' in html
    document.refresh_from_db()
    assert document.version == 1 and document.importance == 8


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
    assert response.status_code == 422
    assert "safety scanner found a github token" in html and TOKEN not in html
    assert "[removed secret]" in html
    assert not MemoryDocument.objects.filter(store__owner=owner).exists()


def test_a_refused_browser_add_keeps_what_the_reviewer_typed(client, reviewer, runbooks):
    client.force_login(reviewer)
    response = client.post(f"/browser/{runbooks.pk}/add", {**FULL, "tags": f"ok, {TOKEN}"})
    html = response.content.decode()
    assert response.status_code == 422
    assert '<details class="add-memory" open>' in html
    assert 'value="ok, [removed secret]"' in html and TOKEN not in html
    assert 'id="add-tags-error"' in html and "of tags[1]" in html
    assert "Roll back the configmap.</textarea>" in html
    assert not MemoryDocument.objects.filter(store=runbooks).exists()


def test_the_browser_add_form_counts_characters(client, reviewer, runbooks):
    client.force_login(reviewer)
    html = client.get(f"/browser/?store={runbooks.pk}").content.decode()
    assert '<span data-count-for="id_content">0</span>' in html
    assert "/static/memory/forms.js" in html


class _EditForm(HTMLParser):
    """The fields a browser sends with a memory's edit form (the one
    holding the metadata block), as the page drew them."""

    def __init__(self, action: str) -> None:
        super().__init__()
        self.action, self.inside, self.fields, self.found = action, False, {}, {}
        self.textarea: str | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            self.inside = attrs.get("action") == self.action
            self.fields = {}
        elif self.inside and tag == "input" and attrs.get("name"):
            self.fields[attrs["name"]] = attrs.get("value") or ""
        elif self.inside and tag == "textarea":
            self.textarea = attrs["name"]
            self.fields[self.textarea] = ""

    def handle_data(self, data):
        if self.textarea:
            self.fields[self.textarea] += data

    def handle_endtag(self, tag):
        if tag == "textarea":
            self.textarea = None
        elif tag == "form" and self.inside:
            self.inside = False
            if "metadata" in self.fields:
                self.found = self.fields


def edit_form(html: str, action: str) -> dict[str, str]:
    parser = _EditForm(action)
    parser.feed(html)
    # A browser drops the newline that opens a textarea.
    return {name: value.removeprefix("\n") for name, value in parser.found.items()}


EXACT_EXPIRY = datetime(2031, 1, 2, 3, 4, 5, 678_000, tzinfo=UTC)


@pytest.mark.parametrize("where", ["mine", "card"])
def test_changing_only_the_content_keeps_the_metadata_exactly(client, owner, where):
    if where == "mine":
        store, page = store_for_user(user=owner), "/mine/"
    else:
        grant = system_grant_set(system_slug="ledger", team="ledger-owners", level="manage")
        owner.groups.add(grant.team)
        store, page = grant.system.store, "/systems/ledger/"
    # As an agent saved it through the API: a tag holding a comma, an expiry
    # with seconds and milliseconds, neither of which an input can show.
    document = make_document(
        store,
        "prefs/units",
        "Metric units.",
        author=owner,
        tags=["a,b", "units"],
        expires_at=EXACT_EXPIRY,
        importance=7,
        recall_hint="When units come up.",
        entities={"service": "billing"},
    )
    client.force_login(owner)
    sent = edit_form(client.get(page).content.decode(), f"{page}{document.pk}/")
    assert sent["tags"] == "a,b, units" and sent["expires_at"]
    response = client.post(
        f"{page}{document.pk}/", {**sent, "action": "edit", "content": "Metric units, always."}
    )
    assert response.status_code == 302
    document.refresh_from_db()
    assert (document.version, document.content) == (2, "Metric units, always.")
    assert document.tags == ["a,b", "units"]
    assert document.expires_at == EXACT_EXPIRY
    assert (document.importance, document.recall_hint) == (7, "When units come up.")
    assert document.entities == {"service": "billing"}


def test_a_metadata_input_the_person_changed_is_read_from_what_they_typed(client, owner):
    document = make_document(
        store_for_user(user=owner),
        "prefs/units",
        "Metric units.",
        author=owner,
        tags=["a,b", "units"],
        expires_at=EXACT_EXPIRY,
    )
    client.force_login(owner)
    sent = edit_form(client.get("/mine/").content.decode(), f"/mine/{document.pk}/")
    edit = {**sent, "action": "edit", "tags": "a,b, units, si", "expires_at": "2032-05-06T07:08"}
    assert client.post(f"/mine/{document.pk}/", edit).status_code == 302
    document.refresh_from_db()
    assert document.tags == ["a", "b", "si", "units"]
    assert localtime(document.expires_at).strftime("%Y-%m-%dT%H:%M:%S") == "2032-05-06T07:08:00"
