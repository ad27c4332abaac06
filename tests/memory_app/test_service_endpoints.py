import pytest

pytestmark = pytest.mark.django_db


def test_healthz_answers_ok_when_the_database_does(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_the_openapi_schema_is_served(client):
    response = client.get("/api/v1/schema", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    assert "/api/v1/me" in response.json()["paths"]


def test_the_api_docs_page_uses_no_cdn(client):
    response = client.get("/api/v1/docs")
    assert response.status_code == 200
    assert b"cdn." not in response.content
    assert b"/static/" in response.content
