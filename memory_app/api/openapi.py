"""The OpenAPI document, agent tools first (a drf-spectacular postprocessing hook),
and the views serving it.

Tools come first, in the manifest's order, each with a request example that
an agent developer can paste; then events, then the review endpoints. A tool
without an example here (added later) is listed all the same.
"""

from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView
from rest_framework.renderers import JSONRenderer

from memory_app.api.manifest import tool_definitions

TOOLS_PREFIX = "/api/v1/tools"

INTRO = """
Durable, scoped memory for AI agents. **Memory is advisory, never authoritative.**

**For agents.** Every tool is `POST /api/v1/tools/<name>` with its arguments as the
JSON body, and `Authorization: Token <key>`. The agent runtime (never the model) sets
`X-Memory-Conversation` (the conversation of this turn), `X-Memory-Run` (the run id)
and, for service accounts allowed to, `X-Memory-On-Behalf-Of`. `GET /api/v1/tools`
returns the tool definitions ready for an LLM; the same tools are served over the
Model Context Protocol at `/mcp` (streamable HTTP). A turn: `memory_context` before
answering, `memory_mark_used` with the ids relied on, `memory_remember` for what was
learned, `memory_propose_promotion` for what the team should keep.

Errors are always `{"error": code, "detail": text, ...}`; a 429 carries `Retry-After`,
a 409 from `memory_patch` carries `current_sha256` (read again and retry).
""".strip()

TAGS = [
    {"name": "tools", "description": "The agent tools: what an agent calls every turn."},
    {"name": "events", "description": "The events outbox: polling and Server-Sent Events."},
    {"name": "review", "description": "Human review: promotions, always-inject, rollback."},
]

EXAMPLES: dict[str, dict] = {
    "memory_search": {"query": "nginx ingress crash loop after config reload", "limit": 5},
    "memory_context": {"message": "The ingress pods restart after every deploy. Why?"},
    "memory_mark_used": {"ids": ["3f0c1a52-8f7e-4c7b-9a55-2f1d3b0e6a11"]},
    "memory_read": {"store": "workspace_runbooks", "path": "ingress/crash-loop"},
    "memory_list": {"store": "conversation", "prefix": "incidents/", "limit": 20},
    "memory_history": {"id": "3f0c1a52-8f7e-4c7b-9a55-2f1d3b0e6a11", "limit": 10},
    "memory_remember": {
        "store": "conversation",
        "title": "Ingress crash loop after config reload",
        "content": "Rolling back the nginx configmap stopped the crash loop (INC-4411).",
        "doc_type": "incident",
        "tags": ["nginx", "ingress"],
        "entities": {"service": "ingress-nginx", "environment": "prod"},
        "source_refs": [{"kind": "incident", "ref": "INC-4411"}],
    },
    "memory_patch": {
        "id": "3f0c1a52-8f7e-4c7b-9a55-2f1d3b0e6a11",
        "expected_sha256": "9b74c9897bac770ffc029102a200c5de6a7e5e1f3a0f1b2c3d4e5f60718293a4",
        "edits": [{"old": "Rolling back", "new": "Reverting"}],
        "tags": ["nginx", "ingress", "configmap"],
        "importance": 7,
    },
    "memory_delete": {"id": "3f0c1a52-8f7e-4c7b-9a55-2f1d3b0e6a11", "reason": "Wrong service."},
    "memory_propose_promotion": {
        "id": "3f0c1a52-8f7e-4c7b-9a55-2f1d3b0e6a11",
        "target_store": "workspace_runbooks",
        "rationale": "Confirmed fix, seen in two incidents.",
    },
}


def _rank(path: str) -> tuple[int, int, str]:
    order = [f"{TOOLS_PREFIX}/{tool['name']}" for tool in tool_definitions()]
    if path in order:
        return (0, order.index(path), path)
    if path == TOOLS_PREFIX:
        return (1, 0, path)
    if path.startswith("/api/v1/events"):
        return (2, 0, path)
    return (3, 0, path)


def agent_first(result: dict, generator, request, public) -> dict:
    """Reorder paths (tools first), set the intro and tags, add request examples."""
    result["info"]["description"] = INTRO
    result["tags"] = TAGS
    result["paths"] = dict(sorted(result["paths"].items(), key=lambda item: _rank(item[0])))
    for path, operations in result["paths"].items():
        name = path.removeprefix(f"{TOOLS_PREFIX}/")
        example = EXAMPLES.get(name)
        body = operations.get("post", {}).get("requestBody", {})
        if example is not None and "application/json" in body.get("content", {}):
            body["content"]["application/json"]["example"] = example
    return result


class ErrorsInJSON:
    """A view under /api/ answering its own format (YAML, an HTML page) when
    it succeeds, and the API's error shape in JSON when it refuses: its
    renderers would draw a 405 as an HTML page or a YAML document. It
    answers GET and HEAD; OPTIONS has nothing to describe here."""

    http_method_names = ["get", "head"]

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        if getattr(response, "exception", False):
            response.accepted_renderer = JSONRenderer()
            response.accepted_media_type = JSONRenderer.media_type
        return response


class SchemaView(ErrorsInJSON, SpectacularAPIView):
    """`GET /api/v1/schema`: the OpenAPI document, YAML or JSON by `Accept`."""


class DocsView(ErrorsInJSON, SpectacularRedocView):
    """`GET /api/v1/docs`: the page rendering the OpenAPI document."""
