"""Who sees what through the read tools: the access matrix."""

import pytest

from memory_app.services.principals import principal_upsert
from tests.factories import UserFactory
from tests.memory_app.api.conftest import remember_body

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(caller_for, payments):
    """owner's private preference, a conversation draft, and a payments system memory."""
    owner = UserFactory(username="owner", teams=["payments-owners"])
    teammate = UserFactory(username="teammate", teams=["payments-readers"])
    outsider = UserFactory(username="outsider")
    owner_tools = caller_for(owner, conversation="shared-conv")
    preference = owner_tools.ok(
        "memory_remember",
        {
            "store": "user",
            "doc_type": "user_preference",
            "title": "Shell",
            "content": "Uses fish shell.",
        },
        status=201,
    )
    draft = owner_tools.ok("memory_remember", remember_body(), status=201)
    system_doc = owner_tools.ok(
        "memory_remember", remember_body(store=payments, path="ledger/retries"), status=201
    )
    return {
        "owner": owner,
        "teammate": teammate,
        "outsider": outsider,
        "preference": preference,
        "draft": draft,
        "system": system_doc,
    }


@pytest.mark.parametrize(
    ("who", "what", "status"),
    [
        ("owner", "preference", 200),
        ("teammate", "preference", 404),
        ("outsider", "preference", 404),
        ("owner", "draft", 200),
        ("teammate", "draft", 404),
        ("outsider", "draft", 404),
        ("owner", "system", 200),
        ("teammate", "system", 200),
        ("outsider", "system", 404),
    ],
)
def test_read_by_id_follows_the_access_matrix(world, caller_for, who, what, status):
    caller = caller_for(world[who], conversation=None)
    response = caller("memory_read", {"id": world[what]["id"]})
    assert response.status_code == status
    if status == 404:
        assert response.json() == {"error": "not_found", "detail": "No such document."}


@pytest.mark.parametrize("tool", ["memory_read", "memory_history", "memory_delete"])
def test_other_tools_hide_what_cannot_be_read(world, caller_for, tool):
    response = caller_for(world["outsider"])(tool, {"id": world["draft"]["id"]})
    assert response.status_code == 404


def test_a_non_participant_naming_the_conversation_gets_404(world, caller_for):
    intruder = caller_for(world["outsider"], conversation="shared-conv")
    response = intruder("memory_list", {"store": "conversation"})
    assert response.status_code == 404
    assert response.json()["error"] == "not_found"


def test_a_user_store_named_by_username_is_404_for_others(world, caller_for):
    response = caller_for(world["teammate"])("memory_list", {"store": "user:owner"})
    assert response.status_code == 404


def test_system_store_listing_needs_a_grant(world, caller_for):
    listed = caller_for(world["teammate"]).ok("memory_list", {"store": "system:payments"})
    assert [d["path"] for d in listed["documents"]] == ["ledger/retries"]
    assert (
        caller_for(world["outsider"])("memory_list", {"store": "system:payments"}).status_code
        == 404
    )


def test_everyone_reads_the_workspace(world, caller_for):
    listed = caller_for(world["outsider"]).ok("memory_list", {"store": "workspace_conventions"})
    assert len(listed["documents"]) == 4
    assert all(d["trust"] == "system_seeded" for d in listed["documents"])


def test_a_revoked_read_permission_is_403(world, caller_for):
    from django.contrib.auth.models import Group

    from memory_app.models import GroupMemoryPolicy

    group = Group.objects.create(name="suspended")
    world["teammate"].groups.add(group)
    GroupMemoryPolicy.objects.create(group=group, can_read_memory=False)
    response = caller_for(world["teammate"])("memory_read", {"id": world["system"]["id"]})
    assert response.status_code == 403
    assert response.json()["error"] == "permission_denied"


class TestOnBehalfOf:
    def test_a_service_account_without_the_permission_gets_403(self, world, caller_for, agent):
        response = caller_for(agent)(
            "memory_read", {"id": world["preference"]["id"]}, **{"X-Memory-On-Behalf-Of": "owner"}
        )
        assert response.status_code == 403
        assert response.json()["error"] == "permission_denied"

    def test_with_the_permission_the_call_is_evaluated_as_that_user(self, world, caller_for):
        assistant = principal_upsert(username="assistant", service_account=True, act_on_behalf=True)
        tools = caller_for(assistant, conversation=None)
        as_owner = tools.with_headers(**{"X-Memory-On-Behalf-Of": "owner"})
        assert as_owner("memory_read", {"id": world["preference"]["id"]}).status_code == 200
        assert tools("memory_read", {"id": world["preference"]["id"]}).status_code == 404
        listed = as_owner.ok("memory_list", {"store": "user"})
        assert [d["path"] for d in listed["documents"]] == ["shell"]

    def test_writes_on_behalf_record_both_principals(self, world, caller_for):
        assistant = principal_upsert(username="assistant", act_on_behalf=True)
        tools = caller_for(assistant, conversation=None).with_headers(
            **{"X-Memory-On-Behalf-Of": "owner"}
        )
        body = tools.ok(
            "memory_remember",
            {
                "store": "user",
                "doc_type": "user_preference",
                "title": "Editor",
                "content": "Uses helix.",
            },
            status=201,
        )
        version = tools.ok("memory_history", {"id": body["id"]})["versions"][0]
        assert version["author"] == "assistant"
        assert version["on_behalf_of"] == "owner"

    def test_an_unknown_user_is_404(self, caller_for):
        assistant = principal_upsert(username="assistant", act_on_behalf=True)
        response = caller_for(assistant)(
            "memory_list", {"store": "user"}, **{"X-Memory-On-Behalf-Of": "nobody"}
        )
        assert response.status_code == 404


def test_a_malformed_runtime_header_is_400(caller_for, agent):
    response = caller_for(agent, conversation="has spaces in it")("memory_list", {"store": "user"})
    assert response.status_code == 400
    assert "X-Memory-Conversation" in response.json()["fields"]
