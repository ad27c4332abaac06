"""The Content-Security-Policy, and templates that live within it."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = sorted((ROOT / "templates").rglob("*.html"))
INLINE = [
    re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.I),
    re.compile(r"\son[a-z]+\s*=", re.I),
    re.compile(r"<style\b|\sstyle\s*=", re.I),
    re.compile(r"javascript:", re.I),
]


def _policy(response) -> dict[str, list[str]]:
    directives = (d.split() for d in response["Content-Security-Policy"].split(";"))
    return {d[0]: d[1:] for d in directives if d}


@pytest.mark.django_db
def test_pages_forbid_inline_code_and_framing(client, owner):
    client.force_login(owner)
    policy = _policy(client.get("/"))
    assert policy["script-src"] == ["'self'"]
    assert policy["style-src"] == ["'self'"]
    assert policy["frame-ancestors"] == ["'none'"]
    assert policy["object-src"] == ["'none'"]


@pytest.mark.django_db
def test_the_api_reference_alone_allows_what_redoc_needs(client):
    policy = _policy(client.get("/api/v1/docs"))
    assert "'unsafe-inline'" in policy["style-src"]
    assert policy["script-src"] == ["'self'"]


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda p: str(p.relative_to(ROOT)))
def test_templates_hold_no_inline_script_or_style(template):
    text = template.read_text()
    for pattern in INLINE:
        assert not pattern.search(text), f"{pattern.pattern} in {template.name}"


def test_htmx_is_told_not_to_inject_styles_or_evaluate_code():
    base = (ROOT / "templates" / "_base.html").read_text()
    assert '"includeIndicatorStyles": false' in base
    assert '"allowEval": false' in base
