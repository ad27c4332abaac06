"""The memory browser: stores, folders, filters, search, and who sees what."""

import pytest

from memory_app.models import Trust
from memory_app.services.curate import document_state_set
from memory_app.services.principals import system_grant_set
from memory_app.services.stores import store_for_user
from tests.factories import UserFactory, WorkspaceStoreFactory, make_document

pytestmark = pytest.mark.django_db

XSS = "<img src=x onerror=alert(1)><script>alert(2)</script>"


@pytest.fixture
def shelf(db):
    store = WorkspaceStoreFactory(slug="shelf")
    make_document(
        store,
        "runbooks/payments/restart",
        "Restart the payments deployment after rolling back the configmap.",
        trust=Trust.ADMIN_APPROVED,
        doc_type="runbook",
        tags=["payments"],
    )
    make_document(
        store,
        "runbooks/kafka/lag",
        "Scale the kafka consumer group to match the partition count when lag grows.",
        doc_type="runbook",
    )
    make_document(store, "notes/dns", "Switch the resolver to the node-local DNS cache.")
    return store


def page(client, **params):
    response = client.get("/browser/", params)
    assert response.status_code == 200
    return response.content.decode()


def test_stores_and_documents_are_listed_for_a_reader(client, owner, shelf):
    client.force_login(owner)
    html = page(client)
    assert "shelf" in html and "3 active" in html
    assert "runbooks/payments/restart" in html and "notes/dns" in html


def test_a_store_opens_as_folders_by_path(client, owner, shelf):
    client.force_login(owner)
    html = page(client, store=shelf.pk)
    assert 'prefix=runbooks%2F">runbooks/</a> <span class="count">2</span>' in html
    assert 'prefix=notes%2F">notes/</a> <span class="count">1</span>' in html
    html = page(client, store=shelf.pk, prefix="runbooks/")
    assert ">payments/</a>" in html and ">kafka/</a>" in html
    assert "notes/dns" not in html
    assert "2 documents" in html


@pytest.mark.parametrize(
    ("params", "present", "absent"),
    [
        ({"trust": "admin_approved"}, "runbooks/payments/restart", "runbooks/kafka/lag"),
        ({"doc_type": "note"}, "notes/dns", "runbooks/kafka/lag"),
        ({"tag": "payments"}, "runbooks/payments/restart", "notes/dns"),
        ({"prefix": "runbooks/ka"}, "runbooks/kafka/lag", "runbooks/payments/restart"),
        ({"scope": "user"}, "No document matches these filters", "runbooks/kafka/lag"),
    ],
)
def test_filters_narrow_the_list(client, owner, shelf, params, present, absent):
    client.force_login(owner)
    html = page(client, **params)
    assert present in html
    assert absent not in html


def test_state_filter_finds_tombstoned_documents(client, owner, reviewer, shelf):
    document = shelf.documents.get(path="notes/dns")
    document_state_set(user=reviewer, document=document, tombstoned=True, reason="stale")
    client.force_login(owner)
    assert "notes/dns" in page(client, state="tombstoned")
    assert "notes/dns" not in page(client, state="active")


def test_search_ranks_the_matching_document_first(client, owner, shelf):
    client.force_login(owner)
    html = page(client, q="kafka consumer lag")
    assert "for “kafka consumer lag”" in html
    first = html.split("<tbody>", 1)[1].split("</tr>", 1)[0]
    assert "runbooks/kafka/lag" in first


def test_search_with_no_match_says_so(client, owner, shelf):
    client.force_login(owner)
    html = page(client, q="kafka", doc_type="checklist")
    assert "Nothing matches “kafka” with these filters" in html


def test_private_memory_stays_private(client, owner, outsider):
    private = store_for_user(user=owner)
    make_document(private, "prefs/editor", "Prefers vim keybindings for the kafka console.")
    client.force_login(outsider)
    assert "prefs/editor" not in page(client)
    assert "prefs/editor" not in page(client, q="kafka vim keybindings")
    assert client.get("/browser/", {"store": private.pk}).status_code == 404
    client.force_login(owner)
    assert "prefs/editor" in page(client, store=private.pk)


def test_system_memory_follows_team_grants(client, owner, outsider):
    grant = system_grant_set(system_slug="ledger", team="ledger-team", level="read")
    owner.groups.add(grant.team)
    make_document(grant.system.store, "facts/owner", "The ledger is owned by the ledger team.")
    client.force_login(owner)
    assert "facts/owner" in page(client, scope="system")
    client.force_login(outsider)
    assert "facts/owner" not in page(client, scope="system")
    assert client.get("/browser/", {"store": grant.system.store.pk}).status_code == 404


def test_bad_filters_are_reported_and_ignored(client, owner, shelf):
    client.force_login(owner)
    html = page(client, scope="galaxy", trust="admin_approved", store="abc", page="x")
    assert "That filter was ignored" in html
    assert "runbooks/payments/restart" in html and "runbooks/kafka/lag" not in html


def test_content_is_escaped(client, owner):
    store = WorkspaceStoreFactory(slug="hostile")
    make_document(store, "notes/xss", XSS, title=XSS, tags=["<b>t</b>"])
    client.force_login(owner)
    for html in (page(client), page(client, q="img src onerror alert")):
        assert "<script>alert(2)</script>" not in html
        assert "&lt;img src=x onerror=alert(1)&gt;" in html


def test_live_search_answers_with_the_results_fragment(client, owner, shelf):
    client.force_login(owner)
    response = client.get("/browser/", {"q": "dns resolver"}, headers={"HX-Request": "true"})
    html = response.content.decode()
    assert "<html" not in html and "Stores" not in html
    assert "notes/dns" in html


def test_pages_keep_the_filters(client, owner):
    store = WorkspaceStoreFactory(slug="many")
    for n in range(55):
        make_document(store, f"notes/n{n:02d}", f"Note number {n}.", embedding=None)
    client.force_login(owner)
    html = page(client, store=store.pk, doc_type="note")
    assert "Page 1 of 2" in html
    assert "?store=" in html and "doc_type=note" in html and "page=2" in html
    assert "notes/n54" in page(client, store=store.pk, doc_type="note", page=2)


@pytest.mark.parametrize("number", ["0", "-5"])
def test_a_page_number_below_one_opens_the_first_page(client, owner, number):
    store = WorkspaceStoreFactory(slug="many")
    for n in range(55):
        make_document(store, f"notes/n{n:02d}", f"Note number {n}.", embedding=None)
    client.force_login(owner)
    html = page(client, store=store.pk, page=number)
    assert "Page 1 of 2" in html
    assert "notes/n00" in html and "notes/n54" not in html
    assert "Page 2 of 2" in page(client, store=store.pk, page="99")


def test_anonymous_visitors_are_sent_to_log_in(client):
    response = client.get("/browser/")
    assert response.status_code == 302
    assert "/accounts/login/" in response["Location"]


def test_queries_stay_bounded_with_500_documents(client, owner, django_assert_max_num_queries):
    store = WorkspaceStoreFactory(slug="big")
    for n in range(500):
        make_document(store, f"area{n % 7}/doc{n:03d}", f"Memory {n} about kafka.", embedding=None)
    for n in range(20):
        UserFactory(username=f"peer{n}")
    client.force_login(owner)
    # Two more than the listing needs: the navigation asks the person's rights.
    for params in ({}, {"store": store.pk}, {"store": store.pk, "prefix": "area3/"}):
        # A chosen store adds the permission lookups for its "add a memory" form.
        with django_assert_max_num_queries(13 if params else 11):
            html = page(client, **params)
        assert "big" in html
    with django_assert_max_num_queries(13):
        html = page(client, q="kafka memory")
    assert "for “kafka memory”" in html


def test_changing_the_scope_swaps_the_store_list_with_the_results(
    client, owner, shelf, django_assert_max_num_queries
):
    mine = store_for_user(user=owner)
    client.force_login(owner)
    with django_assert_max_num_queries(11):
        response = client.get("/browser/", {"scope": "user"}, headers={"HX-Request": "true"})
    html = response.content.decode()
    assert "<html" not in html
    stores = html.split('<div id="store-list" hx-swap-oob="true">')[1].split("</div>")[0]
    # Picking a store keeps the scope chosen.
    assert f'href="?store={mine.pk}&amp;scope=user"' in stores
    assert f'href="?store={shelf.pk}' not in stores
    # The whole page holds the list once, where it belongs, with no swap.
    full = page(client, scope="user")
    assert full.count('id="store-list"') == 1 and "hx-swap-oob" not in full
