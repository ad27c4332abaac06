import pytest
from django.contrib.auth.models import Group
from django.utils import timezone
from rest_framework.test import APIClient

from memory_app.models import ApiKey, GroupMemoryPolicy
from memory_app.permissions import has_memory_permission
from memory_app.services.principals import api_key_find, api_key_issue

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("scheme", ["Token", "Bearer", "bearer"])
def test_a_key_authenticates_with_token_or_bearer(owner, scheme):
    raw = api_key_issue(user=owner).raw
    response = APIClient().get("/api/v1/me", HTTP_AUTHORIZATION=f"{scheme} {raw}")
    assert response.status_code == 200
    assert response.json()["username"] == "owner"


def _assert_not_authenticated(response):
    assert response.status_code == 401
    body = response.json()
    assert body["error"] == "not_authenticated"
    assert body["detail"]


def test_no_credentials_answer_401_in_the_error_shape():
    _assert_not_authenticated(APIClient().get("/api/v1/me"))


def test_an_unknown_key_is_refused_and_not_echoed():
    response = APIClient().get("/api/v1/me", HTTP_AUTHORIZATION="Token ama_not-a-real-key")
    _assert_not_authenticated(response)
    assert b"ama_not-a-real-key" not in response.content


def test_a_revoked_key_is_refused(owner):
    issued = api_key_issue(user=owner)
    ApiKey.objects.filter(pk=issued.key.pk).update(revoked_at=timezone.now())
    _assert_not_authenticated(
        APIClient().get("/api/v1/me", HTTP_AUTHORIZATION=f"Token {issued.raw}")
    )


def test_a_deactivated_users_key_is_refused(owner):
    raw = api_key_issue(user=owner).raw
    owner.is_active = False
    owner.save()
    _assert_not_authenticated(APIClient().get("/api/v1/me", HTTP_AUTHORIZATION=f"Token {raw}"))


def test_a_malformed_header_is_refused():
    _assert_not_authenticated(APIClient().get("/api/v1/me", HTTP_AUTHORIZATION="Token a b"))


def test_only_the_hash_of_a_key_is_stored(owner):
    issued = api_key_issue(user=owner)
    stored = ApiKey.objects.get(pk=issued.key.pk)
    assert issued.raw not in (stored.key_sha256, stored.prefix)
    assert len(stored.key_sha256) == 64


def test_using_a_key_records_when(owner):
    issued = api_key_issue(user=owner)
    APIClient().get("/api/v1/me", HTTP_AUTHORIZATION=f"Token {issued.raw}")
    issued.key.refresh_from_db()
    assert issued.key.last_used_at is not None


def test_a_browser_session_also_authenticates(client, owner):
    client.force_login(owner)
    assert client.get("/api/v1/me").json()["username"] == "owner"


@pytest.mark.parametrize(
    ("revoked", "status"), [("can_read_memory", 403), ("can_manage_memory", 200)]
)
def test_a_key_carries_its_groups_memory_policy(owner, revoked, status):
    team = Group.objects.create(name="contractors")
    owner.groups.add(team)
    GroupMemoryPolicy.objects.create(group=team, **{revoked: False})
    raw = api_key_issue(user=owner).raw
    response = APIClient().post(
        "/api/v1/tools/memory_search",
        {"query": "deploy"},
        format="json",
        HTTP_AUTHORIZATION=f"Token {raw}",
    )
    assert response.status_code == status


def test_a_key_and_its_memory_permissions_are_read_in_one_statement(
    owner, django_assert_num_queries
):
    raw = api_key_issue(user=owner).raw
    api_key_find(raw)  # records the first use
    with django_assert_num_queries(1):
        key = api_key_find(raw)
        assert has_memory_permission(key.user, "read_memory")
        assert has_memory_permission(key.user, "manage_memory")
    assert key.user.username == "owner"
