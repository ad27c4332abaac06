"""The document page's history past one page: every version listed on some
page, reachable to compare and to roll back to."""

import re

import pytest

from memory_app.actors import Actor
from memory_app.models import ChangeKind, MemoryDocument
from memory_app.services.documents import head_update
from memory_app.services.remember import RememberInput, memory_remember
from review_app.views_documents import HISTORY_PAGE_SIZE

# Between the first and last version numbers a page lists.
DASH = "\N{EN DASH}"

pytestmark = pytest.mark.django_db

VERSIONS = 206


def document_of(user, versions: int, path: str = "prefs/long") -> MemoryDocument:
    """A preference of `user` edited by the service every edit goes through
    until it has `versions` versions (v1 reads "text 1", and so on)."""
    actor = Actor(user=user, agent=user)
    data = RememberInput(store="user", path=path, content="text 1", doc_type="user_preference")
    document = memory_remember(actor=actor, data=data).document
    locked = MemoryDocument.objects.select_for_update().get(pk=document.pk)
    for n in range(2, versions + 1):
        head_update(locked, change=ChangeKind.UPDATE, author=user, fields={"content": f"text {n}"})
    locked.refresh_from_db()
    return locked


@pytest.fixture
def long_history(owner) -> MemoryDocument:
    return document_of(owner, VERSIONS)


def url(document) -> str:
    return f"/documents/{document.pk}/"


def listed(html: str) -> list[int]:
    """The version numbers of the history table's rows, top to bottom."""
    table = html.split('id="history-heading"')[1].split("</table>")[0]
    return [int(n) for n in re.findall(r"<tr>\s*<td>(\d+)</td>", table)]


def options(html: str, select_id: str) -> list[str]:
    select = html.split(f'<select id="{select_id}"')[1].split("</select>")[0]
    return re.findall(r'<option value="(\d+)"', select)


def selected(html: str, select_id: str) -> str:
    select = html.split(f'<select id="{select_id}"')[1].split("</select>")[0]
    return re.search(r'<option value="(\d+)" selected>', select).group(1)


def test_the_first_page_says_which_versions_it_shows_and_links_the_older_ones(
    client, owner, long_history
):
    client.force_login(owner)
    html = client.get(url(long_history)).content.decode()
    assert "history intact (206 versions)" in html
    assert listed(html) == list(range(VERSIONS, VERSIONS - HISTORY_PAGE_SIZE, -1))
    first_oldest = VERSIONS - HISTORY_PAGE_SIZE + 1
    assert f"Versions {VERSIONS}{DASH}{first_oldest} of {VERSIONS}" in html
    assert '<a href="?history_page=2">Older versions</a>' in html
    assert '<a href="?history_page=5">Oldest</a>' in html


def test_every_version_is_listed_on_some_history_page(client, owner, long_history):
    client.force_login(owner)
    seen = []
    for number in range(1, 6):
        seen += listed(client.get(f"{url(long_history)}?history_page={number}").content.decode())
    assert seen == list(range(VERSIONS, 0, -1))


def test_the_oldest_page_offers_rollback_and_comparison_of_the_first_versions(
    client, owner, long_history
):
    client.force_login(owner)
    html = client.get(f"{url(long_history)}?history_page=5").content.decode()
    assert listed(html) == [6, 5, 4, 3, 2, 1]
    assert '<a href="?">Newest</a>' in html and '<a href="?history_page=4">Newer' in html
    assert f"Versions 6{DASH}1 of 206" in html
    assert "Roll back to v1</button>" in html
    assert "1" in options(html, "compare-from") and "1" in options(html, "compare-to")
    assert '<input type="hidden" name="history_page" value="5">' in html
    assert 'href="?history_page=5&amp;from=0&amp;to=1"' in html
    response = client.post(f"{url(long_history)}curate", {"action": "rollback", "version": 1})
    assert response.status_code == 302
    long_history.refresh_from_db()
    assert (long_history.version, long_history.content) == (VERSIONS + 1, "text 1")


def test_the_compare_lists_show_the_versions_compared_wherever_they_are(
    client, owner, long_history
):
    client.force_login(owner)
    html = client.get(f"{url(long_history)}?from=1&to=2").content.decode()
    assert "Version 1 → 2" in html
    assert (selected(html, "compare-from"), selected(html, "compare-to")) == ("1", "2")
    assert listed(html)[0] == VERSIONS


def test_an_older_history_page_keeps_the_comparison_and_the_diff_layout(
    client, owner, long_history
):
    client.force_login(owner)
    html = client.get(f"{url(long_history)}?from=3&to=200&diff=split").content.decode()
    older = re.search(r'<a href="([^"]*)">Older versions</a>', html).group(1)
    assert older == "?from=3&amp;to=200&amp;diff=split&amp;history_page=2"
    page = client.get(url(long_history) + older.replace("&amp;", "&")).content.decode()
    assert "Version 3 → 200" in page and 'table class="diff split' in page
    assert (selected(page, "compare-from"), selected(page, "compare-to")) == ("3", "200")


def test_a_history_page_that_is_not_one_gives_the_nearest(client, owner, long_history):
    client.force_login(owner)
    nearest = {"0": 1, "-3": 1, "abc": 1, "": 1, "1e5": 1, "99999999999999999999": 5}
    for given, shown in nearest.items():
        response = client.get(f"{url(long_history)}?history_page={given}")
        assert response.status_code == 200, given
        first = VERSIONS - (shown - 1) * HISTORY_PAGE_SIZE
        assert listed(response.content.decode())[0] == first, given


def test_an_older_history_page_is_bounded_in_queries(
    client, owner, long_history, django_assert_max_num_queries
):
    client.force_login(owner)
    # The document page's own count, plus the head and the two compared
    # versions, none of them on this history page.
    with django_assert_max_num_queries(16):
        response = client.get(f"{url(long_history)}?history_page=3&from=1&to=206")
    assert response.status_code == 200
    assert "Version 1 → 206" in response.content.decode()
