"""A page form the server will not read (too large, too many fields) gets
the app's page with the reason, and one warning line without a traceback."""

import logging
from urllib.parse import urlencode

import pytest
from django.conf import settings
from django.test import Client

from memory_app.models import DreamReviewItem, MemoryDocument

pytestmark = pytest.mark.django_db

FORM = "application/x-www-form-urlencoded"


@pytest.fixture
def strict():
    """A browser's view of the pages: the CSRF check on, as in production."""
    return Client(enforce_csrf_checks=True)


def _token(client, page: str) -> str:
    return client.get(page).context["csrf_token"]


def _post(client, path: str, fields: list[tuple[str, str]]):
    return client.post(path, urlencode(fields), content_type=FORM)


def _one_warning_line(caplog, logger: str) -> None:
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert not [r for r in caplog.records if r.exc_info]
    refusals = [r for r in caplog.records if r.name == logger]
    assert [r.levelname for r in refusals] == ["WARNING"]


def test_a_form_over_the_body_limit_is_413_on_the_apps_page(strict, owner, caplog):
    strict.force_login(owner)
    token = _token(strict, "/mine/")
    before = MemoryDocument.objects.count()
    content = "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 100_000)
    with caplog.at_level(logging.INFO):
        response = _post(
            strict, "/mine/add", [("csrfmiddlewaretoken", token), ("content", content)]
        )
    html = response.content.decode()
    assert response.status_code == 413
    assert "<title>Not accepted · Agent Memory Admin</title>" in html
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    assert f"The form is larger than the server accepts ({limit} bytes)." in html
    assert "Log out" in html  # inside the app's layout, signed in
    assert MemoryDocument.objects.count() == before
    _one_warning_line(caplog, "django.security.RequestDataTooBig")


def test_a_form_with_too_many_fields_is_400_on_the_apps_page(strict, reviewer, caplog):
    strict.force_login(reviewer)
    token = _token(strict, "/queue/")
    items = [("items", f"00000000-0000-0000-0000-{n:012d}") for n in range(1100)]
    fields = [("csrfmiddlewaretoken", token), ("action", "reject"), ("note", "no"), *items]
    with caplog.at_level(logging.INFO):
        response = _post(strict, "/queue/bulk", fields)
    html = response.content.decode()
    assert response.status_code == 400
    limit = settings.DATA_UPLOAD_MAX_NUMBER_FIELDS
    assert f"The form has more fields than the server accepts ({limit})." in html
    assert "Log out" in html  # inside the app's layout, signed in
    assert not DreamReviewItem.objects.exists()
    _one_warning_line(caplog, "django.security.TooManyFieldsSent")


def test_an_unknown_host_keeps_djangos_own_log_line(caplog):
    with caplog.at_level(logging.INFO):
        response = Client().get("/", HTTP_HOST="elsewhere.invalid")
    assert response.status_code == 400
    assert "could not read this request" in response.content.decode()
    assert [r.levelname for r in caplog.records if r.name == "django.security.DisallowedHost"] == [
        "ERROR"
    ]


def test_under_the_api_the_answer_keeps_the_error_shape():
    response = Client().get("/api/v1/promotions", HTTP_HOST="elsewhere.invalid")
    assert response.status_code == 400
    assert response.json() == {"error": "invalid_input", "detail": "The request could not be read."}
