"""The Dream jobs page: runs with progress, and "run now" for reviewers only."""

import pytest
from celery import current_app
from kombu.exceptions import OperationalError

from memory_app.models import DreamJob
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_an_empty_list_says_so(client, owner):
    client.force_login(owner)
    html = client.get("/dreams/").content.decode()
    assert "No dream job has run yet" in html
    assert "Run now" not in html


def test_the_intro_links_the_review_queue_only_for_those_who_may_open_it(client, owner, reviewer):
    client.force_login(owner)
    html = client.get("/dreams/").content.decode()
    assert "wait in the review queue or under" in html
    assert 'href="/queue/"' not in html
    client.force_login(reviewer)
    html = client.get("/dreams/").content.decode()
    assert 'wait in the <a href="/queue/">review queue</a>' in html
    assert client.get("/queue/").status_code == 200


def test_runs_show_status_progress_and_errors(client, reviewer):
    DreamJob.objects.create(kind="compact", status="running", progress_done=40, progress_total=100)
    DreamJob.objects.create(kind="expire", status="succeeded", stats={"due": 2, "expired": 2})
    DreamJob.objects.create(kind="embed", status="failed", error="OSError: <disk> full")
    DreamJob.objects.create(kind="promotion", status="awaiting_review")
    client.force_login(reviewer)
    html = client.get("/dreams/").content.decode()
    assert 'value="40"' in html and "40 / 100" in html
    assert "due: 2; expired: 2" in html
    assert "OSError: &lt;disk&gt; full" in html
    assert 'hx-trigger="every 2s"' in html


def test_polling_stops_when_nothing_is_under_way(client, reviewer):
    DreamJob.objects.create(kind="expire", status="succeeded")
    client.force_login(reviewer)
    response = client.get("/dreams/", headers={"HX-Request": "true"})
    assert "<html" not in response.content.decode()
    assert "every 2s" not in response.content.decode()


def test_a_reviewer_starts_a_run(client, reviewer, django_capture_on_commit_callbacks):
    client.force_login(reviewer)
    with django_capture_on_commit_callbacks() as callbacks:
        response = client.post("/dreams/run", {"kind": "expire"}, follow=True)
    assert "Started a run of expire;" in response.content.decode()
    job = DreamJob.objects.get(kind="expire")
    assert job.status == "queued" and job.requested_by == reviewer
    assert len(callbacks) == 1  # the message to the worker, sent on commit


def test_a_broker_that_refuses_the_run_leaves_it_queued_for_the_requeue(
    client, reviewer, django_capture_on_commit_callbacks, monkeypatch, caplog
):
    def refuse(*args, **kwargs):
        raise OperationalError("Error 111 connecting to 127.0.0.1:6390. Connection refused.")

    monkeypatch.setattr(current_app, "send_task", refuse)
    client.force_login(reviewer)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/dreams/run", {"kind": "expire"}, follow=True)
    assert response.status_code == 200
    assert "Started a run of expire;" in response.content.decode()
    assert DreamJob.objects.get(kind="expire").status == "queued"
    assert "The broker did not take dream job" in caplog.text


def test_a_second_run_of_a_busy_kind_is_not_started(client, reviewer):
    DreamJob.objects.create(kind="compact", status="running")
    client.force_login(reviewer)
    response = client.post("/dreams/run", {"kind": "compact"}, follow=True)
    assert "already under way" in response.content.decode()
    assert DreamJob.objects.filter(kind="compact").count() == 1


@pytest.mark.parametrize("kind", ["promotion", "nonsense", ""])
def test_unknown_kinds_are_refused(client, reviewer, kind):
    client.force_login(reviewer)
    response = client.post("/dreams/run", {"kind": kind}, follow=True)
    assert response.status_code == 200
    assert not DreamJob.objects.exists()


def test_a_service_account_with_the_review_right_is_not_offered_a_run(client):
    agent = UserFactory(username="review-bot", reviewer=True, service_account=True)
    client.force_login(agent)
    assert "Run now" not in client.get("/dreams/").content.decode()
    assert client.post("/dreams/run", {"kind": "expire"}).status_code == 403


def test_only_reviewers_may_run(client, owner):
    client.force_login(owner)
    assert client.post("/dreams/run", {"kind": "expire"}).status_code == 403
    assert not DreamJob.objects.exists()


def test_the_page_is_bounded_in_queries(client, reviewer, django_assert_max_num_queries):
    DreamJob.objects.bulk_create(
        DreamJob(kind="embed", status="succeeded", requested_by=reviewer) for _ in range(100)
    )
    client.force_login(reviewer)
    # Reviewers' rows also fetch each job's first proposals: one query more.
    with django_assert_max_num_queries(10):
        response = client.get("/dreams/")
    assert response.content.decode().count("<tr>") == 31


def test_running_a_job_without_the_review_right_says_what_needed_it(client, owner):
    client.force_login(owner)
    response = client.post("/dreams/run", {"kind": "expire"})
    assert response.status_code == 403
    assert "Running dream jobs needs the review right." in response.content.decode()
    assert not DreamJob.objects.exists()
