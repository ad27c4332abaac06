"""The Markdown renderer: what memory may and may not put on a page."""

import pytest

from review_app.rendering import markdown_to_html


def test_markdown_becomes_html():
    html = markdown_to_html("# Title\n\n- **one**\n- `two`\n\n| a | b |\n|---|---|\n| 1 | 2 |")
    assert "<h1>Title</h1>" in html
    assert "<li><strong>one</strong></li>" in html and "<code>two</code>" in html
    assert "<td>1</td>" in html


@pytest.mark.parametrize(
    ("source", "escaped"),
    [
        ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
        ("<img src=x onerror=alert(1)>", "&lt;img src=x onerror=alert(1)&gt;"),
        ('<a href="javascript:alert(1)">x</a>', '&lt;a href="javascript:alert(1)"&gt;'),
        ("<iframe src=//evil.test></iframe>", "&lt;iframe src=//evil.test&gt;&lt;/iframe&gt;"),
    ],
)
def test_raw_html_in_memory_is_text(source, escaped):
    html = markdown_to_html(source)
    assert escaped in html
    assert "<script" not in html and "<img" not in html and "<iframe" not in html


@pytest.mark.parametrize(
    "source",
    [
        "[x](javascript:alert(1))",
        "[x](JaVaScRiPt:alert(1))",
        "[x](vbscript:msgbox(1))",
        "[x](data:text/html;base64,PHNjcmlwdD4=)",
        "<javascript:alert(1)>",
    ],
)
def test_links_with_dangerous_schemes_are_not_links(source):
    assert "<a " not in markdown_to_html(source)


def test_safe_links_open_without_handing_over_the_page():
    assert markdown_to_html("[docs](https://example.com/a?b=1&c=2)") == (
        '<p><a href="https://example.com/a?b=1&amp;c=2" rel="noopener noreferrer nofollow">'
        "docs</a></p>\n"
    )


def test_images_are_shown_as_text_so_reading_memory_tells_no_remote_host():
    html = markdown_to_html("![pixel](https://tracker.example/p.png)")
    assert "<img" not in html and "src=" not in html and "href=" not in html
    assert "<em>[image: pixel]</em> <code>https://tracker.example/p.png</code>" in html


def test_an_images_words_and_address_are_escaped():
    html = markdown_to_html('![<b>x</b>](javascript:alert(1) "t")')
    assert "<b>" not in html and "<img" not in html and "href" not in html


def test_code_blocks_keep_their_text_and_lose_their_classes():
    html = markdown_to_html('```html\n<b onclick="x()">bold</b>\n```')
    assert html == '<pre><code>&lt;b onclick="x()"&gt;bold&lt;/b&gt;\n</code></pre>\n'
