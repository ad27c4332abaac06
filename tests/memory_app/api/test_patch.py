"""memory_patch: optimistic concurrency, edits, and racing writers."""

from functools import partial

import pytest

from memory_app.actors import Actor, actor_for
from memory_app.errors import Conflict, PolicyDenied
from memory_app.models import DreamReviewItem, MemoryDocument, MemoryVersion
from memory_app.services.delete import deletion_decide
from memory_app.services.patch import memory_patch
from memory_app.services.redact import document_redact
from memory_app.services.remember import RememberInput, memory_remember
from tests.factories import UserFactory
from tests.memory_app.api.conftest import race, remember_body

pytestmark = pytest.mark.django_db


@pytest.fixture
def note(tools):
    return tools.ok("memory_remember", remember_body(path="notes/deploy"), status=201)


def test_it_replaces_content_when_the_sha_matches(tools, note):
    body = tools.ok(
        "memory_patch",
        {"id": note["id"], "expected_sha256": note["sha256"], "content": "Rewritten."},
    )
    assert body["outcome"] == "updated" and body["version"] == 2
    assert body["sha256"] != note["sha256"]
    history = tools.ok("memory_history", {"id": note["id"]})["versions"]
    assert [v["change"] for v in history] == ["patch", "create"]
    assert history[0]["parent_sha256"] == note["sha256"]


def test_edits_apply_in_order(tools, note):
    body = tools.ok(
        "memory_patch",
        {
            "store": "conversation",
            "path": "notes/deploy",
            "expected_sha256": note["sha256"],
            "edits": [
                {"old": "rolling back the configmap", "new": "reverting the configmap"},
                {"old": "INC-4411", "new": "INC-4412"},
            ],
        },
    )
    content = tools.ok("memory_read", {"id": body["id"]})["content"]
    assert "reverting the configmap fixed it in incident INC-4412." in content


@pytest.mark.parametrize("old", ["not in the text", "in"])
def test_an_edit_that_does_not_match_exactly_once_is_400(tools, note, old):
    response = tools(
        "memory_patch",
        {"id": note["id"], "expected_sha256": note["sha256"], "edits": [{"old": old, "new": "x"}]},
    )
    assert response.status_code == 400
    assert "edits" in response.json()["fields"]
    assert MemoryVersion.objects.filter(document_id=note["id"]).count() == 1


def test_a_stale_sha_is_409_with_the_current_one(tools, note):
    tools.ok("memory_patch", {"id": note["id"], "expected_sha256": note["sha256"], "content": "v2"})
    response = tools(
        "memory_patch", {"id": note["id"], "expected_sha256": note["sha256"], "content": "v3"}
    )
    assert response.status_code == 409
    body = response.json()
    assert body["error"] == "conflict"
    assert body["current_version"] == 2
    assert body["current_sha256"] == tools.ok("memory_read", {"id": note["id"]})["sha256"]


def test_content_and_edits_together_are_400(tools, note):
    response = tools(
        "memory_patch",
        {
            "id": note["id"],
            "expected_sha256": note["sha256"],
            "content": "a",
            "edits": [{"old": "INC", "new": "X"}],
        },
    )
    assert response.status_code == 400


def test_a_patch_that_adds_a_secret_is_refused(tools, note):
    response = tools(
        "memory_patch",
        {
            "id": note["id"],
            "expected_sha256": note["sha256"],
            "content": "aws key AKIAZ7Q3MNB4XK2PLW9T",
        },
    )
    assert response.status_code == 422
    assert tools.ok("memory_read", {"id": note["id"]})["version"] == 1


def test_nobody_else_can_patch_my_conversation_memory(tools, note, caller_for):
    other = caller_for(UserFactory(username="other-agent"))
    response = other(
        "memory_patch", {"id": note["id"], "expected_sha256": note["sha256"], "content": "mine"}
    )
    assert response.status_code == 404


@pytest.mark.django_db(transaction=True)
def test_of_eight_racing_patches_with_one_sha_exactly_one_wins(caller_for):
    agent = UserFactory(username="racer")
    note = caller_for(agent).ok("memory_remember", remember_body(path="race"), status=201)
    callers = [caller_for(agent) for _ in range(8)]
    statuses = race(
        8,
        lambda n: (
            callers[n](
                "memory_patch",
                {"id": note["id"], "expected_sha256": note["sha256"], "content": f"writer {n}"},
            ).status_code
        ),
    )
    assert sorted(statuses) == [200] + [409] * 7
    assert MemoryVersion.objects.filter(document_id=note["id"]).count() == 2


METADATA = {
    "tags": ["from-a"],
    "importance": 9,
    "title": "Deploy rollback, checked",
    "recall_hint": "When a deploy must be undone.",
    "entities": {"service": "payments-api"},
    "expires_at": "2031-01-02T03:04:05Z",
}


@pytest.mark.django_db(transaction=True)
def test_racing_metadata_patches_keep_each_others_changes(caller_for):
    agent = UserFactory(username="racer")
    note = caller_for(agent).ok("memory_remember", remember_body(path="race"), status=201)
    fields = list(METADATA)
    callers = [caller_for(agent) for _ in fields]
    statuses = race(
        len(fields),
        lambda n: (
            callers[n](
                "memory_patch",
                {
                    "id": note["id"],
                    "expected_sha256": note["sha256"],
                    fields[n]: METADATA[fields[n]],
                },
            ).status_code
        ),
    )
    assert statuses == [200] * len(fields)
    document = caller_for(agent).ok("memory_read", {"id": note["id"]})
    assert {name: document[name] for name in fields} == METADATA
    assert document["version"] == 1 + len(fields)


def test_a_patch_read_before_a_redaction_cannot_bring_the_text_back(owner, caller_for):
    """The patch's document was read before the owner redacted its title; it
    changes only the importance, and the title stays as the redaction left it."""
    person = caller_for(owner)
    note = person.ok(
        "memory_remember",
        {
            "store": "user",
            "doc_type": "user_preference",
            "title": "Call Jane Roe at 555 0100",
            "content": "Prefers a phone call for incidents.",
        },
        status=201,
    )
    read_before = MemoryDocument.objects.select_related("store").get(pk=note["id"])
    document_redact(user=owner, document=read_before, text="555 0100")
    memory_patch(
        actor=actor_for(owner),
        document=read_before,
        expected_sha256=note["sha256"],
        metadata={"importance": 8},
    )
    document = person.ok("memory_read", {"id": note["id"]})
    assert "555 0100" not in document["title"]
    assert document["importance"] == 8


def test_a_patch_read_before_a_deletion_is_refused(owner, caller_for, reviewer):
    person = caller_for(owner)
    note = person.ok("memory_remember", remember_body(path="going"), status=201)
    read_before = MemoryDocument.objects.select_related("store").get(pk=note["id"])
    person.ok("memory_delete", {"id": note["id"]}, status=202)
    item = DreamReviewItem.objects.get(source_document=note["id"])
    deletion_decide(user=reviewer, item=item, confirm=True)
    with pytest.raises(PolicyDenied):
        memory_patch(
            actor=actor_for(owner),
            document=read_before,
            expected_sha256=note["sha256"],
            metadata={"importance": 8},
        )
    assert person("memory_read", {"id": note["id"]}).json()["state"] == "tombstoned"


@pytest.mark.django_db(transaction=True)
def test_racing_creates_of_one_path_make_one_document_and_lose_nothing(caller_for):
    writer = UserFactory(username="writer")
    callers = [caller_for(writer) for _ in range(6)]
    outcomes = race(
        6,
        lambda n: callers[n].ok(
            "memory_remember",
            remember_body(path="same/path", content=f"distinct value number {n} " * 3),
            status=None,
        )["outcome"],
    )
    assert outcomes.count("created") == 1
    document = MemoryDocument.objects.get(path="same/path")
    assert MemoryVersion.objects.filter(document=document).count() == 1 + outcomes.count("updated")


def test_a_patch_costs_a_fixed_number_of_statements(tools, note, django_assert_num_queries):
    # Authentication with the conversation and its store (1), the document
    # with its store (1), the transaction (2), quota lock and counts (2), the
    # head locked with its version's refs and hashes (1), the head (1), the
    # new version (1) and the event (1).
    with django_assert_num_queries(10):
        body = tools.ok(
            "memory_patch",
            {"id": note["id"], "expected_sha256": note["sha256"], "content": "Rewritten."},
        )
    assert body["version"] == 2


def _read_then_changed(agent, **changed) -> tuple[MemoryDocument, str]:
    """The document as a patch call read it, and its sha, just before
    another writer's patch of `changed` landed."""
    written = memory_remember(
        actor=Actor(user=agent, agent=agent),
        data=RememberInput(
            store="user", path="prefs/race", content="In English.", doc_type="user_preference"
        ),
    ).document
    read = MemoryDocument.objects.get(pk=written.pk)
    memory_patch(
        actor=Actor(user=agent, agent=agent),
        document=MemoryDocument.objects.get(pk=read.pk),
        expected_sha256=read.content_sha256,
        metadata=changed,
    )
    return read, read.content_sha256


@pytest.mark.parametrize(
    ("sent", "refused"),
    [({"title": "Mine"}, True), ({"tags": ["mine"]}, False), ({"title": "Theirs"}, False)],
    ids=["same-field", "other-field", "same-value"],
)
def test_a_patch_racing_another_on_one_field_is_409_and_on_others_merges(sent, refused):
    agent = UserFactory(username="racer")
    read, sha = _read_then_changed(agent, title="Theirs")
    patch = partial(
        memory_patch, actor=Actor(user=agent, agent=agent), document=read, expected_sha256=sha
    )
    if refused:
        with pytest.raises(Conflict) as conflict:
            patch(metadata=sent)
        assert conflict.value.extra["current_version"] == 2
    else:
        patch(metadata=sent)
    head = MemoryDocument.objects.get(pk=read.pk)
    assert head.title == "Theirs"
    assert head.tags == (sent.get("tags") or [])
