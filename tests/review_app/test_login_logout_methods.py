"""The login and logout addresses answer methods as every page does: HEAD as
GET, their form's POST, and the app's 405 page for anything else."""

import pytest

pytestmark = pytest.mark.django_db

REFUSAL = '<h1 id="refusal-heading">Not this way</h1>'


@pytest.mark.parametrize("method", ["put", "patch", "delete"])
@pytest.mark.parametrize("address", ["/accounts/login/", "/accounts/logout/"])
def test_another_method_gets_the_apps_405_page(client, owner, address, method):
    client.force_login(owner)
    response = getattr(client, method)(address)
    assert response.status_code == 405
    assert response["Allow"] == "GET, HEAD, POST"
    assert REFUSAL in response.content.decode()


def test_a_put_to_the_login_form_does_not_log_in(client, owner):
    response = client.put("/accounts/login/", "username=owner&password=x")
    assert response.status_code == 405 and REFUSAL in response.content.decode()


def test_the_login_page_answers_head_as_get(client):
    got, head = client.get("/accounts/login/"), client.head("/accounts/login/")
    assert got.status_code == head.status_code == 200 and head.content == b""


def test_a_logout_link_opened_asks_with_a_button_and_keeps_the_session(client, owner):
    client.force_login(owner)
    response = client.get("/accounts/logout/")
    html = response.content.decode()
    assert response.status_code == 200
    assert "<h1>Log out?</h1>" in html
    assert '<form method="post" action="/accounts/logout/">' in html
    assert "csrfmiddlewaretoken" in html
    assert client.get("/").status_code == 200


def test_the_logout_page_logs_out_with_its_button(client, owner):
    client.force_login(owner)
    response = client.post("/accounts/logout/", follow=True)
    assert response.redirect_chain[-1][0] == "/accounts/login/"
    assert client.get("/").status_code == 302


def test_a_logout_link_opened_when_logged_out_offers_to_log_in(client):
    response = client.get("/accounts/logout/")
    html = response.content.decode()
    assert response.status_code == 200
    assert "You are not logged in." in html and 'href="/accounts/login/"' in html
    assert client.head("/accounts/logout/").content == b""
