import pytest

from memory_app.models import MemoryEvent
from review_app.navigation import PAGES
from tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db


def test_pages_require_login(client):
    for url in ["/", *(f"/{page.slug}/" for page in PAGES)]:
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/?next=")


def test_a_user_logs_in_with_the_form_and_lands_on_the_overview(client, owner):
    page = client.get("/accounts/login/")
    assert page.status_code == 200
    assert b"csrfmiddlewaretoken" in page.content
    response = client.post(
        "/accounts/login/", {"username": "owner", "password": PASSWORD}, follow=True
    )
    assert response.redirect_chain[-1][0] == "/"
    assert b"workspace_conventions" in response.content


def test_a_wrong_password_says_so(client, owner):
    response = client.post("/accounts/login/", {"username": "owner", "password": "nope"})
    assert response.status_code == 200
    assert "didn't match" in response.content.decode()


def test_logout_is_a_post_and_ends_the_session(client, owner):
    client.force_login(owner)
    response = client.post("/accounts/logout/")
    assert response.status_code == 302
    assert client.get("/").status_code == 302


def test_the_overview_counts_the_seeded_conventions(client, owner, django_assert_max_num_queries):
    client.force_login(owner)
    # The inbox's figures and the person's rights come on top of the stores.
    with django_assert_max_num_queries(13):
        response = client.get("/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "workspace_runbooks" in html
    assert 'hx-headers=\'{"X-CSRFToken": "' in html
    assert '<script src="/static/django_htmx/htmx-2.min.js"' in html


def test_an_unknown_page_is_404(client, owner):
    client.force_login(owner)
    assert client.get("/nowhere/").status_code == 404


def test_htmx_is_served_from_our_own_static_files(client):
    response = client.get("/static/django_htmx/htmx-2.min.js")
    assert response.status_code == 200


def test_enter_in_the_address_bar_after_a_refused_save_goes_back_to_the_page(client, owner):
    client.force_login(owner)
    refused = client.post("/mine/add", {"title": "No content", "content": ""})
    assert refused.status_code == 400
    again = client.get("/mine/add", follow=True)
    assert again.redirect_chain == [("/mine/", 302)]
    assert again.status_code == 200
    assert "<h1>My memories</h1>" in again.content.decode()


SOME_ID = "3f2b8c1e-0000-4000-8000-000000000001"


@pytest.mark.parametrize(
    ("action", "page"),
    [
        ("/mine/add", "/mine/"),
        (f"/mine/{SOME_ID}/", "/mine/"),
        ("/systems/ledger/add", "/systems/ledger/"),
        (f"/systems/ledger/{SOME_ID}/", "/systems/ledger/"),
        ("/browser/7/add", "/browser/?store=7"),
        ("/queue/bulk", "/queue/"),
        (f"/queue/{SOME_ID}/decide", "/queue/"),
        (f"/deletions/{SOME_ID}/decide", "/deletions/"),
        ("/dreams/run", "/dreams/"),
        ("/teams/grants", "/teams/"),
        ("/teams/grants/1/remove", "/teams/"),
        ("/teams/1/policy", "/teams/"),
    ],
)
def test_a_get_of_a_form_action_goes_to_the_page_of_the_form(client, owner, action, page):
    client.force_login(owner)
    for response in (client.get(action), client.head(action)):
        assert (response.status_code, response["Location"]) == (302, page)
    assert client.put(action).status_code == 405


def test_an_htmx_request_after_the_session_ended_sends_the_whole_page_to_login(client):
    """Not the login form swapped into the results, and back to the page
    the request came from, not to the fragment's address."""
    response = client.get(
        "/browser/",
        {"q": "runbook"},
        HTTP_HX_REQUEST="true",
        HTTP_HX_CURRENT_URL="http://testserver/browser/?q=runbook",
    )
    assert response.status_code == 200
    assert response["HX-Redirect"] == "/accounts/login/?next=%2Fbrowser%2F%3Fq%3Drunbook"
    assert response.content == b""
    plain = client.get("/browser/", {"q": "runbook"})
    assert plain.status_code == 302 and plain["Location"].startswith("/accounts/login/")


PAGE_URLS = [
    "/",
    "/queue/",
    "/browser/",
    "/systems/",
    "/mine/",
    "/dreams/",
    "/usage/",
    "/events/",
    "/deletions/",
    "/queue/count",
]


@pytest.mark.parametrize("url", [*PAGE_URLS, "/accounts/login/"])
def test_no_template_syntax_reaches_a_page(client, reviewer, url):
    """Django reads `{# #}` on one line only: a longer one is printed."""
    if url != "/accounts/login/":
        client.force_login(reviewer)
    html = client.get(url).content.decode()
    assert "{#" not in html and "{%" not in html and "#}" not in html


@pytest.mark.parametrize("url", PAGE_URLS)
def test_head_answers_a_page_as_get_does_without_the_body(client, reviewer, url):
    client.force_login(reviewer)
    got, head = client.get(url), client.head(url)
    assert got.status_code == head.status_code == 200
    assert head.content == b"" and head["Content-Type"] == got["Content-Type"]


@pytest.mark.parametrize("url", PAGE_URLS)
def test_a_post_to_a_page_is_answered_by_the_apps_405_page(client, reviewer, url):
    client.force_login(reviewer)
    response = client.post(url)
    html = response.content.decode()
    assert response.status_code == 405 and response["Allow"] == "GET, HEAD"
    assert '<h1 id="refusal-heading">Not this way</h1>' in html
    assert "This address is a page: open it, and send its forms from it." in html
    assert 'href="/"' in html


def test_another_method_on_a_form_action_gets_the_405_page_too(client, owner):
    client.force_login(owner)
    response = client.put("/mine/add")
    assert response.status_code == 405 and response["Allow"] == "POST"
    assert "This address takes a form sent from its page." in response.content.decode()


def test_head_on_the_export_exports_nothing(client, db):
    client.force_login(UserFactory(username="root", is_superuser=True))
    response = client.head("/export/memory.jsonl")
    assert response.status_code == 200 and "attachment" in response["Content-Disposition"]
    assert not MemoryEvent.objects.filter(type="memory.exported").exists()
