"""The API key cache: a known key needs no statement, and any revocation,
deactivation or policy change is seen by the very next request."""

import pytest
from django.contrib.auth.models import Group
from django.core.cache import cache
from django.utils import timezone
from rest_framework.test import APIClient

from memory_app.models import ApiKey, GroupMemoryPolicy
from memory_app.services.principals import api_key_find, api_key_hash, api_key_issue

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _key_cache_on(settings):
    settings.MEMORY_API_KEY_CACHE_SECONDS = 60


@pytest.fixture
def issued(owner):
    issued = api_key_issue(user=owner)
    assert api_key_find(issued.raw) is not None  # now cached, its use recorded
    return issued


def _search(raw: str) -> int:
    response = APIClient().post(
        "/api/v1/tools/memory_search",
        {"query": "deploy"},
        format="json",
        HTTP_AUTHORIZATION=f"Token {raw}",
    )
    return response.status_code


def test_a_known_key_authenticates_without_a_statement(issued, django_assert_num_queries):
    with django_assert_num_queries(0):
        key = api_key_find(issued.raw)
    assert key.user.username == "owner"


def test_without_the_setting_every_lookup_reads_the_database(
    issued, settings, django_assert_num_queries
):
    settings.MEMORY_API_KEY_CACHE_SECONDS = 0
    with django_assert_num_queries(1):
        assert api_key_find(issued.raw) is not None


def test_a_revoked_key_is_refused_at_once(issued, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        issued.key.revoked_at = timezone.now()
        issued.key.save()
    assert api_key_find(issued.raw) is None
    assert _search(issued.raw) == 401


def test_a_deleted_key_is_refused_at_once(issued, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        ApiKey.objects.filter(pk=issued.key.pk).delete()
    assert _search(issued.raw) == 401


def test_a_deactivated_users_key_is_refused_at_once(
    issued, owner, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        owner.is_active = False
        owner.save()
    assert _search(issued.raw) == 401


def test_joining_a_group_that_revokes_reading_applies_at_once(
    issued, owner, django_capture_on_commit_callbacks
):
    assert _search(issued.raw) == 200
    team = Group.objects.create(name="contractors")
    GroupMemoryPolicy.objects.create(group=team, can_read_memory=False)
    with django_capture_on_commit_callbacks(execute=True):
        owner.groups.add(team)
    assert _search(issued.raw) == 403


def test_a_policy_change_applies_at_once(issued, owner, django_capture_on_commit_callbacks):
    team = Group.objects.create(name="contractors")
    owner.groups.add(team)
    policy = GroupMemoryPolicy.objects.create(group=team)
    assert _search(issued.raw) == 200
    with django_capture_on_commit_callbacks(execute=True):
        policy.can_read_memory = False
        policy.save()
    assert _search(issued.raw) == 403


def test_the_cache_never_holds_the_password_hash(issued, owner):
    entry = cache.get(f"api-key:{api_key_hash(issued.raw)}")
    assert entry["user"]["username"] == "owner"
    assert owner.password not in repr(entry)
