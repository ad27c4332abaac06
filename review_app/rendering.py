"""Markdown for the review pages, rendered so that memory cannot inject HTML.

Two independent walls: markdown-it runs with raw HTML off, so `<script>` in
the source comes out as text, and its output then passes the nh3 sanitiser
with a short allow-list of tags and attributes and only http(s)/mailto
links. Either one alone would stop the usual payloads; both together mean a
parser bug is not a page bug.
"""

from functools import lru_cache

import nh3
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

_PARSER = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])


def _image_as_text(renderer, tokens, idx, options, env) -> str:
    """An image as the words it stands for and its address, as text: a
    remote image would tell its host who read the memory and when, but a
    reviewer must still see that the memory points at one and where."""
    token = tokens[idx]
    alt = renderer.renderInlineAsText(token.children or [], options, env)
    source = token.attrGet("src") or ""
    return f"<em>[image: {escape(alt) or 'no description'}]</em> <code>{escape(source)}</code>"


_PARSER.add_render_rule("image", _image_as_text)

ALLOWED_TAGS = frozenset(
    {
        "a", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5", "h6",
        "hr", "li", "ol", "p", "pre", "s", "strong", "table", "tbody", "td", "th", "thead",
        "tr", "ul",
    }
)  # fmt: skip
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}}
URL_SCHEMES = frozenset({"http", "https", "mailto"})


@lru_cache(maxsize=512)
def markdown_to_html(source: str) -> SafeString:
    """Sanitised HTML for a Markdown text. Images are shown as text, never
    loaded (`_image_as_text`); links open with rel=noopener noreferrer
    nofollow. Cached: the same versions are shown
    again on every reload of the queue."""
    html = nh3.clean(
        _PARSER.render(source),
        tags=set(ALLOWED_TAGS),
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=set(URL_SCHEMES),
        link_rel="noopener noreferrer nofollow",
    )
    # Safe only because nh3 has just removed everything outside the allow-list.
    return mark_safe(html)  # noqa: S308
