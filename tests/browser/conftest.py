"""A real headless Chromium (Debian's package) driven by Playwright.

The browser is the system's `chromium`: Playwright never downloads one.
"""

import os
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from tests.factories import PASSWORD, UserFactory

# Playwright's sync API runs an event loop in this thread; Django's ORM calls
# made by the tests themselves are still synchronous.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="session")
def browser():
    executable = shutil.which("chromium")
    assert executable, "Chromium is required: python3 tasks.py test installs it (apt-get)."
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def screenshots(tmp_path) -> Path:
    """Where screenshots go: a temporary folder, or MEMORY_SCREENSHOT_DIR
    (docs/screenshots to refresh the committed ones)."""
    folder = Path(os.environ.get("MEMORY_SCREENSHOT_DIR") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    yield page
    context.close()


@pytest.fixture
def login(page, live_server):
    def as_user(username: str, password: str):
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill("#id_username", username)
        page.fill("#id_password", password)
        page.click("button[type=submit]")
        page.wait_for_url(f"{live_server.url}/**")
        return page

    return as_user


@pytest.fixture
def undo_seconds(monkeypatch):
    """Sets how long a queue decision waits for Undo (the server runs in this
    process); one second unless a test asks for more."""
    from review_app import views_queue

    def set_to(seconds: int) -> None:
        monkeypatch.setattr(views_queue, "UNDO_SECONDS", seconds)

    set_to(1)
    return set_to


@pytest.fixture
def agent(db):
    """The service account whose proposals fill the queue."""
    return UserFactory(username="bot", service_account=True)


@pytest.fixture
def reviewer_page(login, undo_seconds):
    """A browser page logged in as a reviewer, decisions waiting `undo_seconds`."""
    UserFactory(username="rita", reviewer=True)
    return login("rita", PASSWORD)
