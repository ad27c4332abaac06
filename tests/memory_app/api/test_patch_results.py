"""memory_patch's answer: never an empty memory, and always "updated"."""

import pytest

from tests.memory_app.api.conftest import remember_body

pytestmark = pytest.mark.django_db


@pytest.fixture
def note(tools):
    return tools.ok("memory_remember", remember_body(path="notes/deploy"), status=201)


def patch(tools, note: dict, **changes):
    return tools("memory_patch", {"id": note["id"], "expected_sha256": note["sha256"], **changes})


@pytest.mark.parametrize("left", ["", " \n\t "])
def test_edits_that_leave_no_text_are_400_naming_edits(tools, note, left):
    whole = tools.ok("memory_read", {"id": note["id"]})["content"]
    response = patch(tools, note, edits=[{"old": whole, "new": left}])
    assert response.status_code == 400, response.content
    assert response.json()["error"] == "invalid_input"
    assert list(response.json()["fields"]) == ["edits"]
    after = tools.ok("memory_read", {"id": note["id"]})
    assert (after["content"], after["version"]) == (whole, 1)


def test_blank_replacement_content_is_400_naming_content(tools, note):
    response = patch(tools, note, content="   ")
    assert response.status_code == 400, response.content
    assert list(response.json()["fields"]) == ["content"]


@pytest.mark.parametrize(
    "changes",
    [
        {"edits": [{"old": "INC-4411", "new": "INC-4411"}]},
        {"expires_at": None},
        {"content": remember_body()["content"]},
    ],
    ids=["edit-to-itself", "no-expiry-again", "same-content"],
)
def test_a_patch_that_changes_nothing_is_updated_and_writes_no_version(tools, note, changes):
    response = patch(tools, note, **changes)
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["outcome"], body["version"], body["sha256"]) == ("updated", 1, note["sha256"])
    assert len(tools.ok("memory_history", {"id": note["id"]})["versions"]) == 1
