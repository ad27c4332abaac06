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


def test_switching_posts_the_state_wanted_so_a_second_click_changes_nothing(staff_client):
    staff_client.post("/webhooks/", FORM)
    webhook = Webhook.objects.get()
    page = staff_client.get("/webhooks/").content.decode()
    assert (
        '<input type="hidden" name="active" value="false"><button type="submit">Switch off' in page
    )
    url = f"/webhooks/{webhook.pk}/toggle"
    first = staff_client.post(url, {"active": "false"}, follow=True)
    assert f"Webhook {FORM['url']} switched off." in first.content.decode()
    # The same form again (a double click, a stale tab) leaves it off.
    again = staff_client.post(url, {"active": "false"}, follow=True)
    assert f"Webhook {FORM['url']} was already off; nothing changed." in again.content.decode()
    webhook.refresh_from_db()
    assert webhook.active is False
    on = staff_client.post(url, {"active": "true"}, follow=True)
    assert f"Webhook {FORM['url']} switched on." in on.content.decode()
    webhook.refresh_from_db()
    assert webhook.active is True


def test_a_get_of_the_switch_goes_back_to_the_page_and_changes_nothing(staff_client):
    staff_client.post("/webhooks/", FORM)
    webhook = Webhook.objects.get()
    for response in (
        staff_client.get(f"/webhooks/{webhook.pk}/toggle"),
        staff_client.head(f"/webhooks/{webhook.pk}/toggle"),
    ):
        assert (response.status_code, response["Location"]) == (302, "/webhooks/")
    webhook.refresh_from_db()
    assert webhook.active is True


def test_the_page_showing_the_secret_is_never_cached(staff_client):
    staff_client.post("/webhooks/", FORM)
    shown = staff_client.get("/webhooks/")
    assert Webhook.objects.get().secret in shown.content.decode()
    assert "no-store" in shown["Cache-Control"]


@pytest.mark.parametrize(
    ("types", "message"),
    [
        (
            "memory.promotion.aproved",
            "memory.promotion.aproved is not an event type. "
            "Did you mean memory.promotion.approved?",
        ),
        ("memory.promotoin.*", "memory.promotoin.* matches no event type."),
        ("billing.*, memory.write.blocked", "billing.* matches no event type."),
    ],
)
def test_an_event_type_no_event_has_is_refused_in_the_form(staff_client, types, message):
    response = staff_client.post("/webhooks/", {**FORM, "event_types": types})
    assert response.status_code == 400
    assert f"Event types: {message}" in response.content.decode()
    assert not Webhook.objects.exists()


@pytest.mark.parametrize("types", ["memory.document.redacted", "memory.promotion.*", "*"])
def test_known_types_and_patterns_matching_them_are_taken(staff_client, types):
    assert staff_client.post("/webhooks/", {**FORM, "event_types": types}).status_code == 302
    assert Webhook.objects.get().event_types == [types]


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("https://hooks.example.com:99999/in", "There is no port 99999."),
        ("https://hooks.example.com:0/in", "There is no port 0."),
    ],
)
def test_a_port_out_of_range_is_named_as_a_port(staff_client, url, message):
    response = staff_client.post("/webhooks/", {**FORM, "url": url})
    html = response.content.decode()
    assert response.status_code == 400
    assert f"HTTPS URL: {message} A port is a number from 1 to 65535." in html
    assert "Use https." not in html
    assert not Webhook.objects.exists()
