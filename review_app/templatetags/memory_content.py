"""Template helpers for memory content: `{{ text|markdown }}` (sanitised
Markdown) and `{% toggle_url "diff" "split" %}` (the current URL with one
query parameter set, for the layout and content links)."""

from django import template
from django.utils.safestring import SafeString

from review_app.rendering import markdown_to_html

register = template.Library()


@register.filter
def markdown(source: str) -> SafeString:
    return markdown_to_html(source or "")


@register.simple_tag(takes_context=True)
def toggle_url(context, name: str, value: str) -> str:
    """Like `{% querystring name=value %}`, but computed once per request:
    a queue page shows the same links on every card."""
    request = context["request"]
    urls = request.__dict__.setdefault("_toggle_urls", {})
    if (name, value) not in urls:
        query = request.GET.copy()
        query[name] = value
        urls[name, value] = f"?{query.urlencode()}"
    return urls[name, value]
