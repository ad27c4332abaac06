"""Every page for every kind of person: what each one is answered."""

import pytest

from memory_app.services.principals import system_grant_set
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

EVERYONE = {"owner", "reader", "manager", "outsider", "reviewer", "staff"}
PAGES = {
    "/": EVERYONE,
    "/queue/": {"reviewer", "staff"},
    "/queue/count": EVERYONE,
    "/deletions/": EVERYONE,
    "/browser/": EVERYONE,
    "/systems/": EVERYONE,
    "/mine/": EVERYONE,
    "/dreams/": EVERYONE,
    "/usage/": EVERYONE,
    "/events/": EVERYONE,
    "/teams/": {"staff"},
    "/export/memory.jsonl": {"staff"},
}


@pytest.fixture
def people(owner, outsider, reviewer):
    system_grant_set(system_slug="ledger", team="ledger-readers", level="read")
    system_grant_set(system_slug="ledger", team="ledger-owners", level="manage")
    return {
        "owner": owner,
        "reader": UserFactory(username="reader", teams=["ledger-readers"]),
        "manager": UserFactory(username="manager", teams=["ledger-owners"]),
        "outsider": outsider,
        "reviewer": reviewer,
        "staff": UserFactory(username="root", is_superuser=True),
    }


@pytest.mark.parametrize("who", sorted(EVERYONE))
def test_each_page_answers_each_person(client, people, who):
    client.force_login(people[who])
    answers = {url: client.get(url).status_code for url in PAGES}
    expected = {url: 200 if who in allowed else 403 for url, allowed in PAGES.items()}
    assert answers == expected


@pytest.mark.parametrize("who", sorted(EVERYONE))
def test_the_system_card_answers_by_grant(client, people, who):
    client.force_login(people[who])
    expected = 200 if who in {"reader", "manager"} else 404
    assert client.get("/systems/ledger/").status_code == expected


@pytest.mark.parametrize("url", sorted(PAGES))
def test_anonymous_visitors_are_sent_to_log_in(client, url):
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")
