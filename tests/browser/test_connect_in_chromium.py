"""The API docs page and the live events page, in Chromium."""

from urllib.parse import urlsplit

import pytest

from memory_app.models import MemoryEvent
from tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_api_docs_load_nothing_from_other_hosts(page, live_server):
    """Redoc's bundle links its maker's logo from a CDN; the page's
    Content-Security-Policy stops that request before it leaves the browser."""
    loaded, refused = [], []
    page.on("response", lambda response: loaded.append(urlsplit(response.url).netloc))
    page.on("requestfailed", lambda request: refused.append(urlsplit(request.url).netloc))
    page.goto(f"{live_server.url}/api/v1/docs")
    page.get_by_text("memory_context", exact=False).first.wait_for(state="attached")
    page.wait_for_timeout(500)
    assert set(loaded) - {""} == {urlsplit(live_server.url).netloc}  # "": blob: and data:
    assert set(refused) <= {"cdn.redoc.ly"}


def test_new_events_appear_without_reloading(login, live_server):
    reviewer = UserFactory(username="watcher", reviewer=True)
    MemoryEvent.objects.create(type="memory.before", principal=reviewer)
    page = login("watcher", PASSWORD)
    page.goto(f"{live_server.url}/events/")
    page.get_by_text("memory.before").wait_for()
    page.wait_for_timeout(500)  # the stream is open
    MemoryEvent.objects.create(type="memory.live.arrived", principal=reviewer)
    page.get_by_text("memory.live.arrived").wait_for(timeout=10_000)
