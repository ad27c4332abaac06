"""The review pages as a reviewer finds them on a working install, in a real
browser: the screenshots in docs/screenshots (queue in both diff layouts,
document page, inbox, deletion requests) come from here.

The world is seeded through the same services agents and reviewers use:
drafts with their metadata and evidence, promotions approved into a shared
runbook store, proposals still waiting, a rejection, a deletion request, a
failed dream job, a scanner block and a week of injected memory. Run with
MEMORY_SCREENSHOT_DIR=docs/screenshots to refresh the committed images.
"""

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from memory_app.actors import Actor
from memory_app.models import (
    DreamJob,
    DreamReviewItem,
    MemoryDocument,
    MemoryEvent,
    MemoryUsage,
    ReviewStatus,
)
from memory_app.services.conversations import conversation_open
from memory_app.services.delete import memory_delete_request
from memory_app.services.promote import (
    memory_propose_promotion,
    promotion_approve,
    promotion_reject,
)
from memory_app.services.remember import RememberInput, memory_remember
from memory_app.services.stores import store_workspace_ensure
from memory_app.services.versions import SourceRef
from tests.browser.test_diff_in_chromium import NOW, PROPOSED, shoot
from tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)

RUNBOOKS = "workspace_runbooks"
RESTART_V1 = """# Restart the payments API

1. Check the error rate on the payments dashboard.
2. Roll back the last configmap change: `kubectl rollout undo deploy/payments-api`.
3. Restart the deployment and watch the readiness probes.
"""
RESTART_V2 = """# Restart the payments API

1. Check the error rate and p99 latency on the payments dashboard.
2. Roll back the last configmap change: `kubectl rollout undo deploy/payments-api`.
3. Drain the card-authorisation queue before restarting (it retries twice).
4. Restart the deployment and watch the readiness probes.

Escalate to #payments-oncall if the error rate stays above 2 % for 10 minutes.
"""
RESTART_V3 = RESTART_V2.replace(
    "3. Drain the card-authorisation queue before restarting (it retries twice).",
    "3. Drain the card-authorisation queue before restarting: it retries each request twice,\n"
    "   so a restart under load doubles the traffic for a minute.",
)
CANARY = """# Flaky canary stage in deploys

Re-run the **canary** stage once. If it fails again with the same probe,
roll back with `deployctl rollback --to previous` and open an incident.
"""


def draft_and_propose(agent, conversation: str, run: str, path: str, content: str, **meta) -> str:
    """An agent's draft in its conversation, proposed for the runbooks."""
    rationale = meta.pop("rationale", "Worked in two incidents; verified with live tools.")
    actor = Actor(
        user=agent,
        agent=agent,
        conversation=conversation_open(user=agent, external_id=conversation),
        run_id=run,
    )
    written = memory_remember(
        actor=actor,
        data=RememberInput(store="conversation", path=path, content=content, **meta),
    )
    proposal = memory_propose_promotion(
        actor=actor,
        document=written.document,
        target_store=RUNBOOKS,
        rationale=rationale,
    )
    return str(proposal.item.pk)


def restart_meta(incident: str, run: str) -> dict:
    return {
        "doc_type": "runbook",
        "recall_hint": "When payments-api returns 5xx after a config change",
        "tags": ["payments", "kubernetes", "rollback"],
        "entities": {"service": "payments-api", "team": "payments-oncall"},
        "importance": 8,
        "source_refs": [
            SourceRef("incident", incident),
            SourceRef("run", run),
            SourceRef("url", "https://wiki.example.com/payments/restart"),
        ],
    }


@pytest.fixture
def working_install(db):
    """What a reviewer (rita) finds after a few weeks of agents at work."""
    rita = UserFactory(username="rita", reviewer=True)
    bot = UserFactory(username="incident-bot", service_account=True)
    deployer = UserFactory(username="deploy-agent", service_account=True)
    store_workspace_ensure(
        slug=RUNBOOKS, name="Runbooks", description="Reviewed runbooks every agent may use."
    )
    for number, (agent, content) in enumerate([(bot, RESTART_V1), (deployer, RESTART_V2)], start=1):
        item = draft_and_propose(
            agent,
            f"conv-incident-47{number}1",
            f"run-82{number}",
            "runbooks/payments/restart",
            content,
            title="Restart the payments API",
            **restart_meta(f"INC-47{number}1", f"run-82{number}"),
        )
        promotion_approve(user=rita, item_id=item, note="Checked against the dashboard.")
    item = draft_and_propose(
        bot,
        "conv-incident-4702",
        "run-790",
        "runbooks/kafka/consumer-lag",
        NOW,
        title="Kafka consumer lag",
    )
    promotion_approve(user=rita, item_id=item)
    rejected = draft_and_propose(
        bot,
        "conv-incident-4755",
        "run-861",
        "runbooks/misc/retry-everything",
        "Retry every failed request three times before paging anyone.",
        title="Retry everything",
    )
    promotion_reject(user=rita, item_id=rejected, note="Too broad: retries hide the cause.")

    draft_and_propose(
        bot,
        "conv-incident-4811",
        "run-903",
        "runbooks/kafka/consumer-lag",
        PROPOSED,
        title="Kafka consumer lag",
        doc_type="runbook",
        recall_hint="When consumer lag on orders keeps growing after a scale-out",
        tags=["kafka", "orders", "lag"],
        entities={"service": "orders-consumer", "topic": "orders"},
        importance=7,
        source_refs=[
            SourceRef("incident", "INC-4811"),
            SourceRef("tool_call", "call-kafka-describe-17"),
            SourceRef("url", "https://wiki.example.com/kafka/lag"),
        ],
        rationale="Scaling to the partition count fixed the lag in INC-4811 and INC-4790.",
    )
    draft_and_propose(
        deployer,
        "conv-deploy-1203",
        "run-911",
        "runbooks/deploy/flaky-canary",
        CANARY,
        title="Flaky canary stage in deploys",
        doc_type="runbook",
        tags=["deploy", "canary"],
        importance=5,
        source_refs=[SourceRef("run", "run-911")],
        rationale="The canary failed and passed on a re-run in three deploys this week.",
    )
    draft_and_propose(
        deployer,
        "conv-deploy-1207",
        "run-918",
        "runbooks/payments/restart",
        RESTART_V3,
        title="Restart the payments API",
        **restart_meta("INC-4822", "run-918"),
    )

    restart = MemoryDocument.objects.get(store__slug=RUNBOOKS, path="runbooks/payments/restart")
    lag = MemoryDocument.objects.get(store__slug=RUNBOOKS, path="runbooks/kafka/consumer-lag")
    asker = Actor(
        user=bot,
        agent=bot,
        conversation=conversation_open(user=bot, external_id="conv-incident-4830"),
        run_id="run-930",
    )
    for path, title, content, reason in [
        (
            "runbooks/dns/restart-coredns",
            "Restart coredns",
            "Restart coredns in kube-system when lookups time out.",
            "Superseded by the DNS cache runbook; restarting coredns hid the real fault twice.",
        ),
        (
            "runbooks/deploy/manual-rollback",
            "Manual rollback",
            "Roll back by hand: scale the new replica set to 0, then the old one up.",
            "deployctl rollback does this safely since v2.3; the manual steps skip the checks.",
        ),
    ]:
        promotion_approve(
            user=rita,
            item_id=draft_and_propose(
                bot, "conv-incident-3990", "run-400", path, content, title=title
            ),
        )
        memory_delete_request(
            actor=asker,
            document=MemoryDocument.objects.get(path=path, store=lag.store),
            reason=reason,
        )
    failed = DreamJob.objects.create(kind="embed", status="failed", error="OSError: disk full")
    DreamJob.objects.filter(pk=failed.pk).update(created_at=timezone.now() - timedelta(hours=5))
    MemoryEvent.objects.create(type="memory.write.blocked", principal=bot, payload={})
    for n, document in enumerate([restart, lag] * 9):
        MemoryUsage.objects.create(
            run_id=f"run-{950 + n}",
            principal=bot,
            document=document,
            version=document.version,
            rank=1,
            score=0.8,
            block="trusted",
            tokens=180,
            hit=n % 3 != 2,
        )
    _spread_in_time()
    return restart


def _spread_in_time() -> None:
    """Proposals waiting for hours and decisions made yesterday, as on a real
    install, rather than everything "0 minutes" old."""
    now = timezone.now()
    items = DreamReviewItem.objects.order_by("created_at")
    for hours, item in zip(range(60, 0, -5), items, strict=False):
        changed = {"created_at": now - timedelta(hours=hours)}
        if item.status != ReviewStatus.PENDING:
            changed["decided_at"] = now - timedelta(hours=hours - 3)
        DreamReviewItem.objects.filter(pk=item.pk).update(**changed)


def test_the_reviewers_pages_on_a_working_install(login, live_server, working_install, screenshots):
    page = login("rita", PASSWORD)
    waiting = page.locator("ul.inbox li")
    expect(waiting.filter(has_text="Promotion proposals").locator(".figure")).to_have_text("3")
    expect(waiting.filter(has_text="Deletion requests").locator(".figure")).to_have_text("2")
    expect(page.get_by_text("Too broad: retries hide the cause.")).to_be_visible()
    shoot(page, screenshots / "inbox.png")

    page.goto(f"{live_server.url}/queue/?diff=unified")
    cards = page.locator("[data-row]")
    expect(cards).to_have_count(3)
    expect(cards.first.locator("table.diff.unified mark").first).to_be_visible()
    expect(page.locator("#badge-queue")).to_have_text("3")
    page.screenshot(path=str(screenshots / "queue.png"), caret="initial")
    cards.first.locator("summary", has_text="Proposed content").click()
    expect(cards.first.locator(".markdown h1")).to_have_text("Kafka consumer lag")
    shoot(page, screenshots / "queue-diff-unified.png")

    page.get_by_role("link", name="Split").first.click()
    expect(page.locator("table.diff.split")).to_have_count(2)
    expect(page.locator("table.diff.new-file")).to_have_count(1)
    shoot(page, screenshots / "queue-diff-split.png")
    # The layout is kept in the session: back to unified for the next visit.
    page.get_by_role("link", name="Unified").first.click()
    expect(page.locator("table.diff.unified")).to_have_count(2)

    page.goto(f"{live_server.url}/documents/{working_install.pk}/")
    expect(page.locator("main > h1")).to_have_text("Restart the payments API")
    history = page.locator("section", has=page.get_by_role("heading", name="History"))
    expect(history.locator("tbody tr")).to_have_count(2)
    expect(history).to_contain_text("approved by rita")
    expect(page.locator("table.diff mark").first).to_be_visible()
    shoot(page, screenshots / "document.png")

    page.goto(f"{live_server.url}/deletions/")
    row = page.locator("tr", has_text="runbooks/dns/restart-coredns")
    expect(row.locator(".removed pre")).to_contain_text("Restart coredns in kube-system")
    shoot(page, screenshots / "deletions.png")
