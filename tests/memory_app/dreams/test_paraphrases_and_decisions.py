"""Compaction finds paraphrases; reviews hold documents `constrained` and are remembered."""

import pytest
from django.db import transaction

from memory_app.actors import Actor
from memory_app.dreams.runner import dream_execute
from memory_app.errors import InvalidInput
from memory_app.models import DreamJob, DreamReviewItem, MemoryDocument, MemoryVersion, Trust
from memory_app.services.context import memory_context_load
from memory_app.services.conversations import conversation_open
from memory_app.services.documents import embedding_for, head_update
from memory_app.services.patch import memory_patch
from memory_app.services.promote import (
    memory_propose_promotion,
    promotion_approve,
    promotion_reject,
)
from memory_app.services.stores import store_workspace_ensure
from memory_app.services.versions import SourceRef
from tests.factories import make_document

pytestmark = pytest.mark.django_db

RUNBOOK = "Restart the node-local-dns daemonset when pods cannot resolve cluster service names."
ROLLOUT = (
    "If in-cluster DNS lookups fail from pods, a rollout restart of node-local-dns brings "
    "resolution back.\n$ kubectl -n kube-system rollout restart daemonset/node-local-dns"
)
VERIFY = (
    "Pods failing to resolve service names were fixed by restarting node-local-dns. "
    "Verify with nslookup from two pods on different nodes."
)
UPSTREAM = (
    "External DNS names fail to resolve from pods when the upstream resolver in the CoreDNS "
    "configmap is wrong."
)
METRICS = "Restart the metrics-server deployment when kubectl top reports no metrics."


def run(kind: str) -> DreamJob:
    return dream_execute(DreamJob.objects.create(kind=kind).pk)


def edit(document, content: str) -> None:
    """A later change of the document, as a curator's edit leaves it."""
    with transaction.atomic():
        locked = MemoryDocument.objects.select_for_update().get(pk=document.pk)
        head_update(
            locked,
            change="update",
            author=None,
            fields={"content": content},
            embedding=embedding_for(locked.title, "", content),
        )


def states(*documents) -> list[str]:
    return [MemoryDocument.objects.get(pk=d.pk).state for d in documents]


@pytest.fixture
def dns_store(db):
    store = store_workspace_ensure(slug="workspace_runbooks", name="Runbooks")
    runbook = make_document(
        store, "dns/node-local", RUNBOOK, title="DNS restart", trust=Trust.ADMIN_APPROVED
    )
    rollout = make_document(
        store,
        "dns/rollout",
        ROLLOUT,
        title="node-local-dns restart fixes lookups",
        source_refs=[SourceRef("incident", "INC-5120")],
    )
    verify = make_document(
        store, "dns/verify", VERIFY, title="Pods could not resolve service names"
    )
    upstream = make_document(store, "dns/upstream", UPSTREAM, title="External DNS from pods")
    metrics = make_document(store, "k8s/metrics", METRICS, title="metrics-server restart")
    return runbook, rollout, verify, upstream, metrics


def test_three_paraphrases_of_one_fix_become_one_merge_and_near_topics_stay_apart(dns_store):
    runbook, rollout, verify, upstream, metrics = dns_store
    job = run("compact")
    assert job.stats["clusters"] == 1 and job.stats["proposed"] == 1
    item = DreamReviewItem.objects.get(action="merge")
    assert set(item.related_documents.all()) == {runbook, rollout, verify}
    assert item.target_path == "dns/node-local"
    merged = item.proposed_content
    assert merged.startswith(RUNBOOK)
    # Every distinct command and fact of the paraphrases is kept.
    assert "$ kubectl -n kube-system rollout restart daemonset/node-local-dns" in merged
    assert "nslookup from two pods on different nodes" in merged
    assert "CoreDNS" not in merged and "metrics-server" not in merged
    assert "dns/rollout v1 (incident:INC-5120)" in item.rationale
    assert states(runbook, rollout, verify) == ["constrained"] * 3
    assert states(upstream, metrics) == ["active", "active"]


def test_paraphrases_in_a_conversation_store_are_left_to_rotation(owner):
    """An approved merge is reviewed memory, which scratch memory never holds."""
    store = conversation_open(user=owner, external_id="dns-talk").store
    for path, text in (("dns/a", RUNBOOK), ("dns/b", ROLLOUT), ("dns/c", VERIFY)):
        make_document(store, path, text, title="DNS restart")
    job = run("compact")
    assert job.stats["clusters"] == 0
    assert not DreamReviewItem.objects.filter(action="merge").exists()


def test_approving_the_merge_keeps_every_source_ref_and_supersedes_the_rest(dns_store, reviewer):
    runbook, rollout, verify, *_ = dns_store
    run("compact")
    item = DreamReviewItem.objects.get(action="merge")
    promotion_approve(user=reviewer, item_id=item.pk)
    head = MemoryVersion.objects.get(document=runbook, version=2)
    refs = {(r.kind, r.ref) for r in head.source_refs.all()}
    assert {
        ("document", "workspace_runbooks/dns/node-local@v1"),
        ("document", "workspace_runbooks/dns/rollout@v1"),
        ("document", "workspace_runbooks/dns/verify@v1"),
        ("incident", "INC-5120"),
    } <= refs
    assert states(runbook, rollout, verify) == ["active", "superseded", "superseded"]


def test_a_member_kept_apart_stays_with_its_own_evidence(dns_store, reviewer):
    """The reviewer finds one member says something else: it is neither
    superseded nor cited as the merged version's evidence."""
    runbook, rollout, verify, *_ = dns_store
    run("compact")
    item = DreamReviewItem.objects.get(action="merge")
    promotion_approve(user=reviewer, item_id=item.pk, content=RUNBOOK, keep_apart=[rollout.pk])
    head = MemoryVersion.objects.get(document=runbook, version=2)
    refs = {(r.kind, r.ref) for r in head.source_refs.all()}
    assert ("document", "workspace_runbooks/dns/verify@v1") in refs
    assert ("document", "workspace_runbooks/dns/rollout@v1") not in refs
    assert ("incident", "INC-5120") not in refs
    assert states(runbook, rollout, verify) == ["active", "active", "superseded"]


def test_the_merge_card_offers_keep_apart_and_approving_applies_it(client, dns_store, reviewer):
    runbook, rollout, verify, *_ = dns_store
    run("compact")
    item = DreamReviewItem.objects.get(action="merge")
    client.force_login(reviewer)
    html = client.get("/queue/").content.decode()
    for member in (rollout, verify):
        assert f'name="keep_apart" value="{member.pk}" form="approve-{item.pk}"' in html
    assert f'name="keep_apart" value="{runbook.pk}"' not in html  # the merge's own target
    client.post(f"/queue/{item.pk}/decide", {"action": "approve", "keep_apart": [str(verify.pk)]})
    assert states(runbook, rollout, verify) == ["active", "superseded", "active"]


def test_the_api_approves_a_merge_keeping_a_member_apart(api_client_for, dns_store, reviewer):
    runbook, rollout, verify, upstream, _ = dns_store
    run("compact")
    item = DreamReviewItem.objects.get(action="merge")
    client = api_client_for(reviewer)
    url = f"/api/v1/promotions/{item.pk}/approve"
    stray = client.post(url, {"keep_apart": [str(upstream.pk)]}, format="json")
    assert stray.status_code == 400 and list(stray.json()["fields"]) == ["keep_apart"]
    assert client.post(url, {"keep_apart": [str(rollout.pk)]}, format="json").status_code == 200
    assert states(runbook, rollout, verify) == ["active", "active", "superseded"]


def test_a_member_kept_apart_leaves_its_words_out_of_the_merge(dns_store, reviewer):
    """The proposed text held every member's lines; approved as proposed
    with one member kept apart, the merge is built again without its."""
    runbook, rollout, *_ = dns_store
    run("compact")
    item = DreamReviewItem.objects.get(action="merge")
    assert "rollout restart daemonset/node-local-dns" in item.proposed_content
    promotion_approve(user=reviewer, item_id=item.pk, keep_apart=[rollout.pk])
    merged = MemoryDocument.objects.get(pk=runbook.pk).content
    assert merged.startswith(RUNBOOK)
    assert "rollout restart daemonset/node-local-dns" not in merged
    assert "nslookup from two pods on different nodes" in merged


def test_a_merge_approved_from_its_card_leaves_a_kept_apart_members_words_out(
    client, dns_store, reviewer
):
    """The card sends its edit box, filled with the proposal, with every
    approval: sent back unchanged it is no edit."""
    runbook, rollout, *_ = dns_store
    run("compact")
    item = DreamReviewItem.objects.get(action="merge")
    client.force_login(reviewer)
    sent_back = item.proposed_content.replace("\n", "\r\n")
    decision = {"action": "approve", "content": sent_back, "keep_apart": [str(rollout.pk)]}
    client.post(f"/queue/{item.pk}/decide", decision)
    merged = MemoryDocument.objects.get(pk=runbook.pk).content
    assert "rollout restart daemonset/node-local-dns" not in merged
    assert "nslookup from two pods on different nodes" in merged


def test_a_merge_rebuilt_without_a_member_uses_the_text_the_reviewer_saw(dns_store, reviewer):
    runbook, rollout, verify, *_ = dns_store
    run("compact")
    item = DreamReviewItem.objects.get(action="merge")
    edit(verify, VERIFY + " Then flush the CoreDNS cache on every node.")
    promotion_approve(user=reviewer, item_id=item.pk, keep_apart=[rollout.pk])
    merged = MemoryDocument.objects.get(pk=runbook.pk).content
    assert "nslookup from two pods on different nodes" in merged
    assert "flush the CoreDNS cache" not in merged


@pytest.mark.parametrize("which", ["target", "stranger"])
def test_only_the_other_members_of_a_merge_may_be_kept_apart(dns_store, reviewer, which):
    runbook, rollout, verify, upstream, _ = dns_store
    run("compact")
    item = DreamReviewItem.objects.get(action="merge")
    kept = runbook if which == "target" else upstream
    with pytest.raises(InvalidInput) as refused:
        promotion_approve(user=reviewer, item_id=item.pk, keep_apart=[kept.pk])
    assert refused.value.extra["fields"] == {"keep_apart": [f"Not one of them: {kept.pk}."]}
    assert DreamReviewItem.objects.get(pk=item.pk).status == "pending"
    assert states(runbook, rollout, verify) == ["constrained"] * 3


def test_a_rejected_merge_is_not_proposed_again_until_a_member_changes(dns_store, reviewer):
    runbook, rollout, verify, *_ = dns_store
    run("compact")
    item = DreamReviewItem.objects.get(action="merge")
    promotion_reject(user=reviewer, item_id=item.pk, note="Keep them apart.")
    assert states(runbook, rollout, verify) == ["active"] * 3
    again = run("compact")
    assert again.stats["proposed"] == 0 and again.stats["already_decided"] == 1
    edit(verify, VERIFY + " Then check the CoreDNS cache hit rate.")
    assert run("compact").stats["proposed"] == 1


def test_a_contradicting_draft_does_not_pull_reviewed_memory_out_of_trust(owner, contradiction):
    """Any agent can write a draft: a dispute it raises holds the draft for
    review, while the reviewed document stays in the trusted block."""
    reviewed, draft = contradiction
    actor = Actor(user=owner, agent=owner)
    run("contradictions")
    assert states(reviewed, draft) == ["active", "constrained"]
    during = memory_context_load(actor=actor, message="payments connection pool size").built
    [entry] = [e for e in during.entries if e.document.pk == reviewed.pk]
    assert entry.block == "trusted"
    trusted, _, _ = during.text.partition("<untrusted_memory_candidates>")
    assert "pool size is 20" in trusted


def test_a_decided_contradiction_is_not_asked_again_unless_one_side_changes(
    owner, reviewer, contradiction
):
    reviewed, draft = contradiction
    assert run("contradictions").stats["proposed"] == 1
    item = DreamReviewItem.objects.get(action="supersede")
    promotion_reject(user=reviewer, item_id=item.pk, note="20 is still right.")
    assert states(reviewed, draft) == ["active", "active"]
    again = run("contradictions")
    assert again.stats["proposed"] == 0 and again.stats["already_decided"] == 1
    memory_patch(
        actor=Actor(user=owner, agent=owner),
        document=MemoryDocument.objects.get(pk=draft.pk),
        expected_sha256=MemoryDocument.objects.get(pk=draft.pk).content_sha256,
        content="The payments connection pool size is 80 in production since Monday.",
    )
    assert run("contradictions").stats["proposed"] == 1


def _proposed(owner, draft, target_path: str) -> str:
    actor = Actor(user=owner, agent=owner)
    proposal = memory_propose_promotion(
        actor=actor,
        document=MemoryDocument.objects.get(pk=draft.pk),
        target_store="workspace_runbooks",
        target_path=target_path,
        rationale="Seen in production.",
    )
    return proposal.item.pk


def test_a_draft_is_not_disputed_with_what_a_reviewer_promoted_it_into(
    owner, reviewer, contradiction
):
    """Approved with an edit, the promoted text differs from the draft's:
    the draft must not reopen the decision and pull it out of trust."""
    _, draft = contradiction
    item = _proposed(owner, draft, "services/payments/pool-now")
    promoted = promotion_approve(
        user=reviewer,
        item_id=item,
        note="45 after the resize.",
        content="The payments connection pool size is 45 in production now.",
    )
    job = run("contradictions")
    assert job.stats["proposed"] == 0
    assert not DreamReviewItem.objects.filter(action="supersede").exists()
    assert states(promoted) == ["active"]


def test_a_draft_a_reviewer_refused_to_promote_over_a_document_is_not_asked_again(
    owner, reviewer, contradiction
):
    reviewed, draft = contradiction
    item = _proposed(owner, draft, reviewed.path)
    promotion_reject(user=reviewer, item_id=item, note="Pool size is 20, not 50.")
    again = run("contradictions")
    assert again.stats["proposed"] == 0 and again.stats["already_decided"] == 1
    assert states(reviewed, draft) == ["active", "active"]
    # A changed draft is a new question.
    edit(draft, "The payments connection pool size is 80 in production since Monday.")
    assert run("contradictions").stats["proposed"] == 1
