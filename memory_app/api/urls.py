from csp.constants import SELF, UNSAFE_INLINE
from csp.decorators import csp_update
from django.urls import path, re_path
from django.views.decorators.csrf import csrf_exempt

from memory_app.api import errors, review
from memory_app.api.catalog import ALL_TOOL_VIEWS
from memory_app.api.events import events_list
from memory_app.api.manifest import tools_manifest
from memory_app.api.openapi import DocsView, SchemaView
from memory_app.api.stream import events_stream
from memory_app.api.views_me import me

app_name = "api"

urlpatterns = [
    path("me", me, name="me"),
    path("tools", tools_manifest, name="tools"),
    *(path(f"tools/{view.name}", view.as_view(), name=view.name) for view in ALL_TOOL_VIEWS),
    path("events", events_list, name="events"),
    path("events/stream", events_stream, name="events-stream"),
    path("promotions", review.promotions_list, name="promotions"),
    path(
        "promotions/<uuid:item_id>/approve",
        review.promotion_approve_view,
        name="promotion-approve",
    ),
    path("promotions/<uuid:item_id>/reject", review.promotion_reject_view, name="promotion-reject"),
    path(
        "documents/<uuid:document_id>/always-inject",
        review.always_inject_view,
        name="document-always-inject",
    ),
    path("documents/<uuid:document_id>/rollback", review.rollback_view, name="document-rollback"),
    path("documents/<uuid:document_id>/redact", review.redact_view, name="document-redact"),
    path("schema", SchemaView.as_view(), name="schema"),
    # Redoc renders with inline styles and a web worker: allowed on this page only.
    path(
        "docs",
        csp_update({"style-src": [UNSAFE_INLINE], "worker-src": [SELF, "blob:"]})(
            DocsView.as_view(url_name="api:schema", template_name="api/redoc.html")
        ),
        name="docs",
    ),
    # Any other path, any method: the error shape (API.md), also while
    # DEBUG draws Django's own page for unknown paths elsewhere.
    re_path(r"", csrf_exempt(errors.not_found), name="not-found"),
]
