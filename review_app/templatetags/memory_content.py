"""`{{ text|markdown }}`: sanitised Markdown for memory content in templates."""

from django import template
from django.utils.safestring import SafeString

from review_app.rendering import markdown_to_html

register = template.Library()


@register.filter
def markdown(source: str) -> SafeString:
    return markdown_to_html(source or "")
