"""The offline capture extractor on the cases a transcript gets wrong most easily."""

import time

from memory_app.capture import rules
from memory_app.capture.transcript import messages_from


def kinds(messages) -> list[str]:
    return [d.kind for d in rules.extract(messages_from(messages=messages)).drafts]


def test_a_question_is_not_a_preference():
    assert kinds([{"role": "user", "content": "Should we always squash-merge?"}]) == []
    assert kinds([{"role": "user", "content": "Please always squash-merge."}]) == ["preference"]


def test_a_preference_the_assistant_states_is_not_the_users():
    said = [{"role": "assistant", "content": "I prefer tabs, and from now on I use them."}]
    assert kinds(said) == []


def test_a_command_followed_by_failure_or_only_reading_resolved_nothing():
    run = [
        {"role": "user", "content": "The payments alert is firing again."},
        {"role": "assistant", "content": "$ kubectl -n payments get pods"},
        {"role": "tool", "content": "payments-1 1/1 Running, all healthy"},
        {"role": "assistant", "content": "$ kubectl -n payments rollout restart deploy/payments"},
        {"role": "tool", "content": "error: deployments.apps 'payments' not found"},
    ]
    assert kinds(run) == []


def test_a_verification_alone_is_not_an_incident_memory():
    report = "Incident closed.\nVerified by: the dashboard is green again."
    assert rules.extract(messages_from(text=report)).drafts == []


def test_a_command_that_fixed_an_incident_without_a_stated_cause_is_a_runbook():
    run = [
        {"role": "user", "content": "Checkout is degraded, 5xx everywhere."},
        {"role": "assistant", "content": "$ kubectl -n shop rollout undo deploy/checkout"},
        {"role": "tool", "content": "deployment.apps/checkout rolled back"},
        {"role": "assistant", "content": "Error rate is back to normal."},
    ]
    [draft] = rules.extract(messages_from(messages=run)).drafts
    assert (draft.kind, draft.doc_type) == ("command", "runbook")
    assert draft.content.endswith("- `kubectl -n shop rollout undo deploy/checkout`")


def test_a_huge_single_line_is_read_in_linear_time():
    """Whitespace runs are where careless patterns backtrack quadratically."""
    line = "**Root cause:** x" + " " * 150_000 + "y"
    text = "### Learnings" + " " * 50 + "\n- " + "a" * 20 + " " * 50_000 + "!\n$ k" + " " * 50_000
    started = time.perf_counter()
    rules.extract(messages_from(text=line + "\n" + text))
    assert time.perf_counter() - started < 2
