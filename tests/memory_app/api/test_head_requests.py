"""HEAD is answered as GET without the body: load balancers and monitors
probe with it, and a 405 reads as an outage."""

import pytest
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "path", ["/api/v1/me", "/api/v1/tools", "/api/v1/events", "/api/v1/promotions"]
)
def test_a_get_endpoint_of_the_api_answers_head_as_get(api_client_for, reviewer, path):
    client = api_client_for(reviewer)
    got = client.get(path)
    head = client.head(path)
    assert (head.status_code, got.status_code) == (200, 200), head.content
    assert head["Content-Type"] == got["Content-Type"] == "application/json"
    assert head.content == b""


def test_head_without_a_key_is_401_like_get(client):
    response = client.head("/api/v1/me")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Token realm="api"'


@pytest.mark.parametrize("path", ["/healthz", "/readyz"])
def test_the_health_checks_answer_head_without_a_key(path):
    response = APIClient().head(path)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response.content == b""


@pytest.mark.parametrize("path", ["/healthz", "/readyz"])
def test_the_health_checks_refuse_writes(path):
    assert APIClient().post(path).status_code == 405


def test_the_metrics_answer_head_as_get():
    client = APIClient()
    got, head = client.get("/metrics"), client.head("/metrics")
    assert (head.status_code, got.status_code) == (200, 200)
    assert head["Content-Type"] == got["Content-Type"] and head.content == b""
