"""Diffs and Markdown on the pages: comparing versions, layouts, new files, sanitising."""

from html.parser import HTMLParser

import pytest
from pytest_django.asserts import assertInHTML

from memory_app.services.stores import store_workspace_ensure
from tests.factories import UserFactory, make_document
from tests.review_app.test_document_page import url, write
from tests.review_app.test_queue import propose

pytestmark = pytest.mark.django_db

HOSTILE_MARKDOWN = (
    "# Runbook\n\n"
    "<script>alert(1)</script>\n\n"
    "<img src=x onerror=alert(2)>\n\n"
    '[click](javascript:alert(3)) and <a href="javascript:alert(4)">raw</a>\n\n'
    "[docs](https://example.com/runbook)"
)


@pytest.fixture
def five(owner):
    """A document with five versions: "step 1" … "step 5" on its second line."""
    for n in range(1, 6):
        document = write(owner, f"title\nstep {n}\nend", path="five")
    document.refresh_from_db()
    return document


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.found: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, dict(attrs)))


def tags_in(fragment: str) -> list[tuple[str, dict]]:
    """The elements a browser would build from the fragment (escaped text is not one)."""
    parser = _Tags()
    parser.feed(fragment)
    return parser.found


def assert_inert(fragment: str) -> None:
    tags = tags_in(fragment)
    assert {tag for tag, _ in tags} <= {"div", "h1", "p", "a", "pre"}
    for _, attrs in tags:
        assert not [name for name in attrs if name.startswith("on")]
        assert not attrs.get("href", "").lower().startswith("javascript")


def rendered_pane(html: str) -> str:
    start = html.index('<div class="markdown"')
    return html[start : html.index("</div>", start) + len("</div>")]


def diff_section(html: str) -> str:
    start = html.index('<section aria-labelledby="diff-heading"')
    return html[start : html.index("</section>", start) + len("</section>")]


def test_two_chosen_versions_are_compared_with_the_changed_word_marked(client, owner, five):
    client.force_login(owner)
    html = diff_section(client.get(f"{url(five)}?from=2&to=5").content.decode())
    assert "Version 2 → 5" in html
    assertInHTML('<td class="code">step <mark>2</mark></td>', html)
    assertInHTML('<td class="code">step <mark>5</mark></td>', html)
    assertInHTML('<option value="2" selected>v2 · update</option>', html)
    assertInHTML('<option value="5" selected>v5 · update</option>', html)


def test_from_zero_shows_a_version_as_a_new_file(client, owner, five):
    client.force_login(owner)
    html = diff_section(client.get(f"{url(five)}?from=0&to=3").content.decode())
    assert "Version 3 as a new file" in html and "New file: v3" in html
    assert 'class="diff new-file"' in html and "Split" not in html


def test_a_document_with_one_version_shows_it_as_a_new_file(client, owner):
    document = write(owner, "only\nversion", path="single")
    client.force_login(owner)
    html = diff_section(client.get(url(document)).content.decode())
    assert "New file: v1" in html and "2 lines" in html
    assert "diff split" not in html and "<mark>" not in html


@pytest.mark.parametrize("query", ["from=abc", "to=-1", "to=0", "from=1.5", "to=%C2%B2", "from=2x"])
def test_bad_version_parameters_are_a_clear_400(client, owner, five, query):
    client.force_login(owner)
    response = client.get(f"{url(five)}?{query}")
    assert response.status_code == 400
    html = response.content.decode()
    assert "takes a version number" in html and 'role="alert"' in html
    assert "Compare" in html  # the form to pick valid versions is still there


@pytest.mark.parametrize("query", ["from=6", "to=9", "to=99999999999999999999999"])
def test_a_version_this_document_lacks_is_404(client, owner, five, query):
    client.force_login(owner)
    assert client.get(f"{url(five)}?{query}").status_code == 404


def test_a_version_number_of_another_document_is_404(client, owner, five):
    other = write(owner, "short", path="other")
    client.force_login(owner)
    assert five.versions.filter(version=4).exists()
    assert client.get(f"{url(other)}?from=1&to=4").status_code == 404


def test_a_plain_user_cannot_compare_someone_elses_document(client, outsider, five):
    client.force_login(outsider)
    assert client.get(f"{url(five)}?from=1&to=2").status_code == 404


def test_the_split_layout_is_chosen_by_a_link_and_remembered(client, owner, five):
    client.force_login(owner)
    first = diff_section(client.get(url(five)).content.decode())
    assert 'class="diff unified"' in first
    assertInHTML(
        '<a href="?diff=split" hx-get="?diff=split" hx-target="#diff" hx-push-url="true"'
        ' data-diff-layout="split">Split</a>',
        first,
    )
    split = diff_section(client.get(f"{url(five)}?from=1&to=3&diff=split").content.decode())
    assert 'class="diff split"' in split
    assertInHTML('<th scope="col" colspan="3">v1</th>', split)
    # The layout links keep the versions being compared.
    assert 'href="?from=1&amp;to=3&amp;diff=unified"' in split
    later = diff_section(client.get(url(five)).content.decode())
    assert 'class="diff split"' in later
    assert 'class="diff split"' not in client.get(f"{url(five)}?diff=unified").content.decode()


def test_the_queue_shows_a_new_document_as_a_new_file(client, reviewer):
    agent = UserFactory(username="agent", service_account=True)
    propose(agent, content="Roll back the configmap.\nThen verify.")
    client.force_login(reviewer)
    html = client.get("/queue/?diff=split").content.decode()
    assert "New file: Proposed" in html and 'class="diff new-file"' in html
    assert "diff split" not in html


def test_the_queue_diffs_against_what_the_target_holds_in_the_chosen_layout(client, reviewer):
    agent = UserFactory(username="agent", service_account=True)
    runbooks = store_workspace_ensure(slug="workspace_runbooks", name="Runbooks")
    make_document(runbooks, path="fix/0", content="Roll back the secret.")
    propose(agent, content="Roll back the configmap.")
    client.force_login(reviewer)
    unified = client.get("/queue/").content.decode()
    assertInHTML('<td class="code">Roll back the <mark>secret</mark>.</td>', unified)
    assertInHTML('<td class="code">Roll back the <mark>configmap</mark>.</td>', unified)
    split = client.get("/queue/?diff=split").content.decode()
    assertInHTML('<td class="code new">Roll back the <mark>configmap</mark>.</td>', split)


def test_markdown_is_rendered_sanitised_on_the_document_page(client, owner):
    document = write(owner, HOSTILE_MARKDOWN, path="hostile")
    client.force_login(owner)
    html = client.get(url(document)).content.decode()
    rendered = rendered_pane(html)
    assert "<h1>Runbook</h1>" in rendered
    assert_inert(rendered)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in rendered
    assertInHTML(
        '<a href="https://example.com/runbook" rel="noopener noreferrer nofollow">docs</a>',
        rendered,
    )
    # The source is one click away, escaped.
    assert "&lt;img src=x onerror=alert(2)&gt;" in html[html.index('data-content-pane="source"') :]


def test_the_source_view_works_without_javascript(client, owner):
    document = write(owner, "# Heading\n\ntext", path="md")
    client.force_login(owner)
    html = client.get(f"{url(document)}?content=source").content.decode()
    assertInHTML('<pre class="content" data-content-pane="source"># Heading\n\ntext</pre>', html)
    assert 'class="markdown" data-content-pane="rendered" hidden' in html


def test_the_queue_card_renders_the_proposal_sanitised(client, reviewer):
    agent = UserFactory(username="agent", service_account=True)
    item_id = propose(agent, content=HOSTILE_MARKDOWN)
    client.force_login(reviewer)
    html = client.get(f"/queue/{item_id}/content", HTTP_HX_REQUEST="true").content.decode()
    preview = rendered_pane(html)
    assert "<h1>Runbook</h1>" in preview
    assert_inert(preview)
    assert "&lt;img src=x onerror=alert(2)&gt;" in preview


def test_comparing_versions_is_bounded_in_queries(client, owner, django_assert_max_num_queries):
    for n in range(30):
        document = write(owner, f"line {n}\nsame", path="many")
    client.force_login(owner)
    client.get(f"{url(document)}?diff=split")  # the one session write, when the choice changes
    # The document page's own count (test_document_page): comparing listed versions adds none.
    with django_assert_max_num_queries(14):
        response = client.get(f"{url(document)}?from=1&to=30&diff=split")
    assert response.status_code == 200
    assert "Version 1 → 30" in response.content.decode()


def test_the_layout_link_on_the_queue_swaps_the_rows_only(client, reviewer):
    agent = UserFactory(username="agent", service_account=True)
    runbooks = store_workspace_ensure(slug="workspace_runbooks", name="Runbooks")
    make_document(runbooks, path="fix/0", content="Roll back the secret.")
    propose(agent, content="Roll back the configmap.")
    client.force_login(reviewer)
    html = client.get("/queue/?diff=split", HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in html and 'class="diff split"' in html
    assert 'hx-get="?diff=unified" hx-target="#queue-rows"' in html
