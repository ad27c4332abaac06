from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView

from memory_app.api.views_me import me

app_name = "api"

urlpatterns = [
    path("me", me, name="me"),
    path("schema", SpectacularAPIView.as_view(), name="schema"),
    path("docs", SpectacularRedocView.as_view(url_name="api:schema"), name="docs"),
]
