"""The Content-Security-Policy breaks nothing: Chromium reports no violation
while htmx searches, polls and swaps, and no error at all (a missing
favicon was one on every first visit)."""

import pytest

from tests.factories import PASSWORD, UserFactory, WorkspaceStoreFactory, make_document

pytestmark = pytest.mark.django_db(transaction=True)


def test_pages_and_htmx_run_without_a_csp_violation(page, login, live_server):
    violations, errors = [], []
    page.on(
        "console",
        lambda message: "Content Security Policy" in message.text and violations.append(message),
    )
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    store = WorkspaceStoreFactory(slug="workspace_ops")
    make_document(store, "runbooks/kafka/lag", "Kafka consumer lag: scale the consumer group.")
    UserFactory(username="ivy", reviewer=True)
    login("ivy", PASSWORD)
    for path in ("/", "/queue/", "/events/", "/dreams/"):
        page.goto(f"{live_server.url}{path}")
        page.wait_for_load_state("networkidle")
    page.goto(f"{live_server.url}/browser/")
    page.fill("#id_q", "consumer lag")
    page.wait_for_selector("text=for “consumer lag”")
    assert "runbooks/kafka/lag" in page.locator("#results").inner_text()
    assert [v.text for v in violations] == []
    assert errors == []
