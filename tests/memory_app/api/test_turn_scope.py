"""The conversation and the turn's stores, resolved in one statement per call,
the caller's API key's lookup included when the call is the key user's own.

Nothing is kept between calls: a revoked key, grant or permission and a
removed participant take effect on the very next call.
"""

import pytest
from django.contrib.auth.models import Group
from django.utils import timezone

from memory_app.access import access_turn
from memory_app.actors import Actor
from memory_app.errors import NotFound
from memory_app.models import ApiKey, Conversation, GroupMemoryPolicy, MemoryStore, SystemGrant
from memory_app.selectors.search import context_stores_q
from memory_app.selectors.turn import turn_rows
from memory_app.services.conversations import conversation_open
from memory_app.services.principals import (
    TurnWanted,
    api_key_find,
    api_key_issue,
    system_grant_set,
)
from memory_app.services.stores import store_for_user, store_workspace_ensure
from tests.factories import UserFactory
from tests.memory_app.api.conftest import remember_body

pytestmark = pytest.mark.django_db


@pytest.fixture
def scene(payments):
    """Workspace stores, two systems (one granted), users' stores and conversations."""
    system_grant_set(system_slug="billing", team="billing-readers", level="read")
    store_workspace_ensure(slug="workspace_runbooks", name="Runbooks")
    alice = UserFactory(username="alice", teams=["payments-readers"])
    bob = UserFactory(username="bob", teams=["billing-readers"])
    store_for_user(user=alice)
    store_for_user(user=bob)
    shared = conversation_open(user=alice, external_id="shared")
    shared.participants.add(bob)
    conversation_open(user=alice, external_id="alice-only")
    conversation_open(user=bob, external_id="bob-only")
    return {"alice": alice, "bob": bob}


def _expected(user, conversation: Conversation | None) -> set[int]:
    actor = Actor(user=user, agent=user, conversation=conversation)
    return set(MemoryStore.objects.filter(context_stores_q(actor)).values_list("pk", flat=True))


@pytest.mark.parametrize("who", ["alice", "bob"])
@pytest.mark.parametrize("conversation", [None, "shared", "alice-only", "nobody-has-it"])
def test_the_statement_finds_the_stores_the_access_rule_allows(scene, who, conversation):
    user = scene[who]
    found = Conversation.objects.filter(external_id=conversation).first()
    if found is not None and not found.participants.filter(pk=user.pk).exists():
        with pytest.raises(NotFound):
            access_turn(user=user, external_id=conversation)
        return
    turn = access_turn(user=user, external_id=conversation)
    assert turn.conversation == found
    assert set(turn.stores) == _expected(user, found)
    labels = {store.label for store in turn.stores.values()}
    assert labels == {store.label for store in MemoryStore.objects.filter(pk__in=turn.stores)}


@pytest.mark.parametrize("who", ["alice", "bob"])
@pytest.mark.parametrize("conversation", [None, "shared", "alice-only", "nobody-has-it"])
def test_read_with_the_key_the_turn_is_the_one_read_alone(scene, who, conversation):
    user = scene[who]
    key = api_key_find(api_key_issue(user=user).raw, turn=TurnWanted(conversation))
    alone = turn_rows(user=user, external_id=conversation)
    assert key.user == user
    assert (key.turn.user_id, key.turn.external_id) == (user.pk, conversation)
    assert key.turn.rows.conversation == alone.conversation
    assert key.turn.rows.joined == alone.joined
    assert set(key.turn.rows.stores) == set(alone.stores)
    assert {s.label for s in key.turn.rows.stores.values()} == {
        s.label for s in alone.stores.values()
    }


def test_no_key_is_found_with_a_turn_for_a_revoked_key_or_an_inactive_user(scene):
    revoked = api_key_issue(user=scene["alice"])
    ApiKey.objects.filter(pk=revoked.key.pk).update(revoked_at=timezone.now())
    assert api_key_find(revoked.raw, turn=TurnWanted("shared")) is None
    inactive = api_key_issue(user=scene["bob"])
    scene["bob"].is_active = False
    scene["bob"].save()
    assert api_key_find(inactive.raw, turn=TurnWanted("shared")) is None
    assert api_key_find("ama_not-a-key", turn=TurnWanted(None)) is None


def test_a_superuser_keeps_reading_whatever_their_groups_say(scene):
    boss = UserFactory(username="boss", is_superuser=True)
    suspended = Group.objects.create(name="suspended")
    boss.groups.add(suspended)
    GroupMemoryPolicy.objects.create(group=suspended, can_read_memory=False)
    turn = access_turn(user=boss, external_id=None)
    assert set(turn.stores) == _expected(boss, None)
    assert turn.stores
    key = api_key_find(api_key_issue(user=boss).raw, turn=TurnWanted(None))
    assert set(key.turn.rows.stores) == set(turn.stores)


def test_a_revoked_key_answers_401_on_the_next_call(caller_for, scene):
    alice = caller_for(scene["alice"], conversation="shared")
    alice.ok("memory_search", {"query": "nginx"})
    ApiKey.objects.filter(user=scene["alice"]).update(revoked_at=timezone.now())
    assert alice("memory_search", {"query": "nginx"}).status_code == 401


def test_a_removed_participant_gets_404_on_the_next_call(caller_for, scene):
    bob = caller_for(scene["bob"], conversation="shared")
    bob.ok("memory_remember", remember_body(path="bob-note"), status=201)
    assert bob.ok("memory_context", {"message": "nginx ingress crash loop"})["documents"]
    Conversation.objects.get(external_id="shared").participants.remove(scene["bob"])
    for tool, body in [
        ("memory_context", {"message": "nginx ingress crash loop"}),
        ("memory_search", {"query": "nginx"}),
        ("memory_remember", remember_body(path="bob-again")),
    ]:
        assert bob(tool, body).status_code == 404, tool


def test_a_revoked_grant_hides_the_system_on_the_next_call(caller_for, scene, payments):
    writer = caller_for(UserFactory(username="writer", teams=["payments-owners"]))
    writer.ok("memory_remember", remember_body(store=payments, path="ledger/retries"), status=201)
    alice = caller_for(scene["alice"], conversation="shared")
    assert "ledger/retries" in _paths(alice.ok("memory_search", {"query": "nginx ingress"}))
    SystemGrant.objects.filter(team__name="payments-readers").delete()
    assert "ledger/retries" not in _paths(alice.ok("memory_search", {"query": "nginx ingress"}))
    assert alice("memory_search", {"query": "nginx", "stores": [payments]}).status_code == 404


def test_a_revoked_read_permission_is_403_on_the_next_call(caller_for, scene):
    alice = caller_for(scene["alice"], conversation="shared")
    alice.ok("memory_context", {"message": "nginx"})
    suspended = Group.objects.create(name="suspended")
    scene["alice"].groups.add(suspended)
    GroupMemoryPolicy.objects.create(group=suspended, can_read_memory=False)
    response = alice("memory_context", {"message": "nginx"})
    assert response.status_code == 403
    assert response.json()["error"] == "permission_denied"


def test_writes_land_in_the_stores_the_turn_resolved(caller_for, scene, payments):
    owner = caller_for(UserFactory(username="owner", teams=["payments-owners"]), conversation="c")
    owner.ok("memory_remember", remember_body(path="first"), status=201)
    again = owner.ok("memory_remember", remember_body(path="second", content="Other."), 201)
    assert again["store"] == "conversation"
    system = owner.ok("memory_remember", remember_body(store=payments, path="x"), status=201)
    assert system["store"] == payments


def _paths(body: dict) -> set[str]:
    return {result["path"] for result in body["results"]}
