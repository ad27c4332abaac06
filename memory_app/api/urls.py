from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView

from memory_app.api.events import events_list
from memory_app.api.manifest import tools_manifest
from memory_app.api.tools import TOOL_VIEWS
from memory_app.api.views_me import me

app_name = "api"

urlpatterns = [
    path("me", me, name="me"),
    path("tools", tools_manifest, name="tools"),
    *(path(f"tools/{view.name}", view.as_view(), name=view.name) for view in TOOL_VIEWS),
    path("events", events_list, name="events"),
    path("schema", SpectacularAPIView.as_view(), name="schema"),
    path("docs", SpectacularRedocView.as_view(url_name="api:schema"), name="docs"),
]
