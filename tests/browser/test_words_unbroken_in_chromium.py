"""Tables and queue cards at a laptop's width in a real browser: a short
word (a state, a trust, a column's name) is never cut in two, while a long
path still wraps instead of widening the page."""

import pytest
from playwright.sync_api import expect

from memory_app.actors import Actor
from memory_app.models import Trust
from memory_app.services.conversations import conversation_open
from memory_app.services.promote import memory_propose_promotion
from memory_app.services.remember import RememberInput, memory_remember
from memory_app.services.stores import store_workspace_ensure
from tests.factories import PASSWORD, UserFactory, make_document

pytestmark = pytest.mark.django_db(transaction=True)

LONG_PATH = "runbooks/" + "/".join(f"payments-api-region-{n}" for n in range(6))
LONG_TITLE = "Restart the payments deployment after rolling back the configmap " * 2

# The words of each element's own text that the browser drew on more than
# one line: a range over a word has one box per line it is on.
CUT_WORDS = """(selector) => {
  const cut = [];
  for (const element of document.querySelectorAll(selector)) {
    const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.parentElement.closest("code, a")) continue;
      for (const match of node.data.matchAll(/\\S+/g)) {
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        const lines = new Set(Array.from(range.getClientRects(), (r) => Math.round(r.top)));
        if (lines.size > 1) cut.push(match[0]);
      }
    }
  }
  return cut;
}"""


@pytest.fixture
def shelf(db):
    store = store_workspace_ensure(slug="workspace_runbooks", name="Runbooks")
    for n in range(3):
        make_document(
            store,
            f"{LONG_PATH}/{n}",
            "Roll back the configmap, then verify.",
            title=LONG_TITLE,
            trust=Trust.SYSTEM_SEEDED,
            doc_type="service_pattern",
            tags=["payments", "rollback", "configmap", "verification"],
        )
    return store


def test_the_browser_table_cuts_no_short_word_and_stays_inside_the_page(login, live_server, shelf):
    UserFactory(username="rita", reviewer=True)
    page = login("rita", PASSWORD)
    page.goto(f"{live_server.url}/browser/")
    expect(page.locator("table.grid tbody tr")).to_have_count(7)
    assert page.evaluate(CUT_WORDS, "table.grid th, table.grid td") == []
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280


def test_a_queue_card_cuts_no_label_beside_a_long_value(login, live_server, shelf):
    agent = UserFactory(username="bot", service_account=True)
    conversation = conversation_open(user=agent, external_id="conv-incident-4711")
    actor = Actor(user=agent, agent=agent, conversation=conversation, run_id="run-4711")
    draft = memory_remember(
        actor=actor,
        data=RememberInput(
            store="conversation",
            path=LONG_PATH,
            title="Restart payments",
            content="Roll back the configmap, then verify.",
            doc_type="service_pattern",
            tags=["payments-api-region-0", "configmap-verification-steps"],
        ),
    ).document
    memory_propose_promotion(
        actor=actor, document=draft, target_store="workspace_runbooks", rationale="Worked."
    )
    UserFactory(username="rita", reviewer=True)
    page = login("rita", PASSWORD)
    page.goto(f"{live_server.url}/queue/")
    expect(page.locator("[data-row]")).to_have_count(1)
    assert page.evaluate(CUT_WORDS, "[data-row] *, .diff th") == []
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
