"""The staff webhooks page: refusals shown in the form, and
POST/redirect/GET so a refresh never registers twice."""

import pytest

from memory_app.models import Webhook
from tests.memory_app.webhooks.conftest import dns  # noqa: F401 (an autouse fixture)

pytestmark = pytest.mark.django_db

FORM = {"url": "https://hooks.example.com/in", "event_types": "memory.*"}


@pytest.fixture
def staff_client(client, staff):
    client.force_login(staff)
    return client


def test_a_registration_redirects_and_shows_the_secret_once(staff_client):
    response = staff_client.post("/webhooks/", FORM)
    assert (response.status_code, response["Location"]) == (302, "/webhooks/")
    page = staff_client.get("/webhooks/").content.decode()
    webhook = Webhook.objects.get()
    assert "Webhook registered." in page and webhook.secret in page
    again = staff_client.get("/webhooks/").content.decode()  # a refresh
    assert webhook.secret not in again and "Webhook registered." not in again
    assert Webhook.objects.count() == 1


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("https://127.0.0.1/hook", "127.0.0.1 is a loopback address"),
        ("https://169.254.169.254/latest", "169.254.169.254 is a link-local address"),
        ("https://[::1]/hook", "::1 is a loopback address"),
    ],
)
def test_an_internal_address_is_refused_in_the_form(staff_client, url, why):
    response = staff_client.post("/webhooks/", {**FORM, "url": url})
    assert response.status_code == 400
    html = response.content.decode()
    assert f"HTTPS URL: {why}: webhooks are not sent there." in html
    assert f'value="{url}"' in html  # what was typed stays in the form
    assert not Webhook.objects.exists()


def test_a_name_resolving_to_loopback_is_refused_in_the_form(staff_client, dns):  # noqa: F811
    dns.names["internal.example.com"] = ["127.0.0.1"]
    response = staff_client.post("/webhooks/", {**FORM, "url": "https://internal.example.com/"})
    assert response.status_code == 400
    assert "internal.example.com resolves to 127.0.0.1, a loopback address" in (
        response.content.decode()
    )
    assert not Webhook.objects.exists()


def test_a_url_registered_already_is_refused_in_the_form(staff_client):
    staff_client.post("/webhooks/", FORM)
    response = staff_client.post("/webhooks/", {**FORM, "event_types": "*"})
    assert response.status_code == 400
    html = response.content.decode()
    assert "This URL is already registered; switch that webhook on or off instead." in html
    assert f'value="{FORM["url"]}"' in html and 'value="*"' in html
    assert Webhook.objects.count() == 1


@pytest.mark.parametrize(("who", "status"), [("owner", 403), ("reviewer", 403), ("staff", 302)])
def test_only_staff_may_register(client, owner, reviewer, staff, who, status):
    client.force_login({"owner": owner, "reviewer": reviewer, "staff": staff}[who])
    assert client.post("/webhooks/", FORM).status_code == status
    assert Webhook.objects.count() == (1 if who == "staff" else 0)


def test_a_visitor_is_sent_to_sign_in(client):
    response = client.post("/webhooks/", FORM)
    assert response.status_code == 302 and "/login" in response["Location"]
    assert not Webhook.objects.exists()
