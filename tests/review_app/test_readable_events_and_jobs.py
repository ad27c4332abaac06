"""Events and dream jobs a person can read: labelled fields, dates on one
line, durations in words, and job results that lead to what they proposed."""

from datetime import timedelta

import pytest
from django.utils import timezone

from memory_app.dreams.proposals import propose_review
from memory_app.models import DreamJob, MemoryEvent
from memory_app.services.promote import promotion_approve, promotion_defer
from review_app.templatetags.review_format import duration
from tests.factories import UserFactory, WorkspaceStoreFactory, make_document
from tests.review_app.test_queue import XSS, propose

pytestmark = pytest.mark.django_db


@pytest.fixture
def agent(db):
    return UserFactory(username="agent", service_account=True)


def rows(html: str) -> str:
    return html.split('<tbody id="event-rows">')[1]


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (timedelta(seconds=2), "2 s"),
        (0.25, "250 ms"),
        (59.6, "1 min"),
        (185, "3 min 5 s"),
        (timedelta(hours=1, minutes=2, seconds=3), "1 h 2 min"),
        (7200, "2 h"),
        (None, ""),
        (-1, ""),
        ("soon", ""),
    ],
)
def test_durations_read_as_words(value, words):
    assert duration(value) == words


def test_a_duration_between_two_times():
    start = timezone.now()
    assert duration(start, start + timedelta(seconds=42)) == "42 s"
    assert duration(start, None) == ""


def test_event_details_are_labelled_fields_not_reprs(client, reviewer):
    MemoryEvent.objects.create(
        type="memory.write.blocked",
        principal=reviewer,
        payload={
            "tool": "memory_remember",
            "run_id": "run-7",
            "findings": [{"detector": "aws_access_key", "start": 4, "end": 24, "field": "content"}],
            "edited": False,
        },
    )
    client.force_login(reviewer)
    html = rows(client.get("/events/").content.decode())
    assert "<dt>Tool</dt><dd>memory_remember</dd>" in html
    assert "<dt>Run</dt><dd>run-7</dd>" in html
    assert "<li>aws_access_key at 4-24 in content</li>" in html
    assert "<dt>Edited</dt><dd>no</dd>" in html
    assert "{&#x27;" not in html and "[{" not in html


def test_injected_documents_and_the_trace_are_readable(client, reviewer):
    MemoryEvent.objects.create(
        type="memory.context.loaded",
        principal=reviewer,
        payload={
            "trace_id": 12,
            "tokens": 40,
            "documents": [
                {"id": "x", "path": "runbooks/lag", "store": "ops", "trust": "admin_approved"}
            ],
        },
    )
    client.force_login(reviewer)
    html = rows(client.get("/events/").content.decode())
    assert '<dt>Retrieval trace</dt><dd><a href="/usage/traces/12/">12</a></dd>' in html
    assert "<li>runbooks/lag in ops · admin_approved</li>" in html


def test_hostile_event_data_renders_as_text(client, reviewer):
    MemoryEvent.objects.create(
        type="memory.policy.denied",
        principal=reviewer,
        payload={"reason": XSS, XSS: "key", "kept": [XSS]},
    )
    client.force_login(reviewer)
    html = rows(client.get("/events/").content.decode())
    assert "<script>" not in html and "<img" not in html
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in html


def test_event_dates_sit_on_one_line_with_a_machine_readable_time(client, reviewer):
    event = MemoryEvent.objects.create(type="memory.x", principal=reviewer, payload={})
    client.force_login(reviewer)
    html = rows(client.get("/events/").content.decode())
    local = timezone.localtime(event.created_at)
    assert f">{local:%Y-%m-%d %H:%M:%S}</time>" in html
    assert "<br><small>" not in html


def test_events_name_the_document_and_its_store(client, reviewer):
    document = make_document(WorkspaceStoreFactory(slug="ops"), "runbooks/dns", "Use the cache.")
    MemoryEvent.objects.create(type="memory.x", principal=reviewer, document=document, payload={})
    client.force_login(reviewer)
    html = rows(client.get("/events/").content.decode())
    assert f'<a href="/documents/{document.pk}/">dns</a> in ops' in html


def test_events_stay_bounded_with_documents(client, reviewer, django_assert_max_num_queries):
    document = make_document(WorkspaceStoreFactory(slug="ops"), "runbooks/dns", "Use the cache.")
    MemoryEvent.objects.bulk_create(
        MemoryEvent(type="memory.x", principal=reviewer, document=document, payload={"n": n})
        for n in range(300)
    )
    client.force_login(reviewer)
    with django_assert_max_num_queries(9):
        html = client.get("/events/").content.decode()
    assert html.count('<dl class="fields">') == 50


def test_promotion_jobs_appear_with_links_to_what_they_proposed(client, reviewer, agent):
    pending, approved, deferred = propose(agent, 0), propose(agent, 1), propose(agent, 2)
    document = promotion_approve(user=reviewer, item_id=approved, note="")
    promotion_defer(user=reviewer, item_id=deferred, note="")
    client.force_login(reviewer)
    html = client.get("/dreams/").content.decode().split("<tbody>")[1]
    assert html.count("<td>promotion</td>") == 3
    # Each open proposal's link opens the tab it is on.
    assert (
        f'href="/queue/?status=pending#item-{pending}">promote workspace_runbooks/fix/0</a>' in html
    )
    assert f'href="/queue/?status=deferred#item-{deferred}">' in html
    assert f'href="/documents/{document.pk}/">promote workspace_runbooks/fix/1</a>' in html
    assert "<td>agent</td>" in html  # started by the proposing agent


def test_request_jobs_stay_with_reviewers(client, owner, agent):
    propose(agent, 0)
    DreamJob.objects.create(kind="expire", status="succeeded")
    client.force_login(owner)
    html = client.get("/dreams/").content.decode().split("<tbody>")[1]
    assert "<td>promotion</td>" not in html and "<td>expire</td>" in html
    assert "#item-" not in html


def test_rescan_flags_link_to_the_deletions_page(client, reviewer):
    job = DreamJob.objects.create(kind="rescan", status="succeeded", stats={"flagged": 1})
    propose_review(job, make_document(WorkspaceStoreFactory(slug="ops"), "x/y", "t"), rationale="r")
    client.force_login(reviewer)
    html = client.get("/dreams/").content.decode()
    assert '<a href="/deletions/">tombstone ops/x/y</a>' in html


def test_a_finished_job_says_how_long_it_took(client, reviewer):
    now = timezone.now()
    DreamJob.objects.create(
        kind="embed", status="succeeded", started_at=now - timedelta(seconds=2), finished_at=now
    )
    client.force_login(reviewer)
    assert '<td class="nowrap">2 s</td>' in client.get("/dreams/").content.decode()


def test_start_is_primary_and_delete_is_danger(client, reviewer, owner):
    from tests.review_app.test_deletions import request_deletion

    request_deletion(owner)
    client.force_login(reviewer)
    assert '<button type="submit" class="primary">Start</button>' in (
        client.get("/dreams/").content.decode()
    )
    deletions = client.get("/deletions/").content.decode()
    assert 'value="confirm" class="danger">Delete</button>' in deletions


def test_dreams_stay_bounded_with_many_jobs_and_proposals(
    client, reviewer, agent, django_assert_max_num_queries
):
    for n in range(40):
        propose(agent, n)
    job = DreamJob.objects.create(kind="rescan", status="succeeded")
    store = WorkspaceStoreFactory(slug="ops")
    for n in range(12):
        propose_review(job, make_document(store, f"x/{n}", f"text {n}"), rationale="r")
    client.force_login(reviewer)
    with django_assert_max_num_queries(10):
        html = client.get("/dreams/").content.decode()
    assert "12 proposals in all" in html
    assert html.count("<td>promotion</td>") == 29
