"""Role-aware pages: the navigation offers only what a person may use, and a
refusal is a page of the app that says why, logged in one line."""

import logging
import re
import uuid

import pytest
from django.contrib.auth.models import Group

from memory_app.models import GroupMemoryPolicy
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

ALL_LINKS = {
    "/queue/",
    "/deletions/",
    "/browser/",
    "/systems/",
    "/mine/",
    "/dreams/",
    "/usage/",
    "/events/",
    "/teams/",
    "/webhooks/",
}


@pytest.fixture
def people(owner, reviewer):
    UserFactory(username="no-reading", teams=["muted"])
    GroupMemoryPolicy.objects.create(
        group=Group.objects.get(name="muted"), can_read_memory=False, can_manage_memory=False
    )
    return {
        "owner": owner,
        "reviewer": reviewer,
        "staff": UserFactory(username="root", is_superuser=True),
        "agent": UserFactory(username="agent", service_account=True),
        "no-reading": UserFactory(username="no-reading"),
    }


def nav_links(html: str) -> set[str]:
    nav = html.split('<nav aria-label="Main">')[1].split("</nav>")[0]
    return set(re.findall(r'href="(/[a-z]+/)"', nav)) - {"/admin/"}


EXPECTED = {
    "owner": ALL_LINKS - {"/queue/", "/teams/", "/webhooks/"},
    "reviewer": ALL_LINKS - {"/teams/", "/webhooks/"},
    "staff": ALL_LINKS,
    "agent": {"/browser/", "/systems/", "/mine/", "/dreams/", "/usage/", "/events/"},
    "no-reading": {"/dreams/", "/usage/", "/events/"},
}


@pytest.mark.parametrize("who", sorted(EXPECTED))
def test_the_navigation_shows_only_pages_the_person_may_use(client, people, who):
    client.force_login(people[who])
    links = nav_links(client.get("/").content.decode())
    assert links == EXPECTED[who]
    assert all(client.get(url).status_code == 200 for url in links)


def test_a_forbidden_page_says_why_inside_the_app(client, owner, caplog):
    client.force_login(owner)
    with caplog.at_level(logging.WARNING, logger="django.request"):
        response = client.get("/queue/")
    assert response.status_code == 403
    html = response.content.decode()
    assert "<title>Not allowed · Agent Memory Admin</title>" in html
    assert "The review queue needs the review right." in html
    assert nav_links(html) == EXPECTED["owner"]
    [record] = [r for r in caplog.records if r.name == "django.request"]
    assert record.exc_info is None and "\n" not in record.getMessage()
    assert record.getMessage() == ("Forbidden (The review queue needs the review right.): /queue/")


def test_a_missing_document_is_a_404_page_with_the_reason(client, owner, caplog):
    client.force_login(owner)
    with caplog.at_level(logging.WARNING, logger="django.request"):
        response = client.get(f"/documents/{uuid.uuid4()}/")
    assert response.status_code == 404
    html = response.content.decode()
    assert "No such document." in html and '<nav aria-label="Main">' in html
    [record] = [r for r in caplog.records if r.name == "django.request"]
    assert record.exc_info is None
    assert record.getMessage().startswith("Not Found (No such document.): /documents/")


def test_an_unknown_address_is_a_404_page_in_the_layout(client, owner):
    client.force_login(owner)
    response = client.get("/nowhere/")
    assert response.status_code == 404
    html = response.content.decode()
    assert "There is nothing at this address, or nothing you may see." in html
    assert "Resolver404" not in html and "/browser/" in html


def test_an_anonymous_404_offers_to_log_in(client):
    html = client.get("/nowhere/").content.decode()
    assert 'href="/accounts/login/"' in html and '<nav aria-label="Main">' not in html


@pytest.mark.parametrize("method", ["get", "post"])
@pytest.mark.parametrize("path", ["/api/v1/nope", "/api/v1/tools/memory_nothing", "/api/v2/x"])
def test_unknown_api_paths_answer_the_json_error_shape(client, owner, method, path):
    client.force_login(owner)
    response = getattr(client, method)(path)
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"error": "not_found", "detail": "Not found."}


def test_unknown_api_paths_answer_json_without_credentials(client):
    response = client.get("/api/v1/nope")
    assert response.status_code == 404
    assert response.json()["error"] == "not_found"
