from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path, re_path
from django.views.decorators.csrf import csrf_exempt
from django.views.generic import TemplateView

from memory_app.api import errors as api_errors
from memory_app.observability.views import metrics, readyz
from memory_app.views import healthz
from review_app.forms import LoginForm
from review_app.methods import SAFE, allow, page_and_form

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    path("metrics", metrics, name="metrics"),
    path("api/v1/", include("memory_app.api.urls")),
    # The rest of /api (`/api/v1` without its slash among it): the API's
    # error shape, never Django's pages, whatever DEBUG says.
    re_path(r"^api(?:/|$)", csrf_exempt(api_errors.not_found)),
    # The app's 405 page for other methods, as on every review page.
    path(
        "accounts/login/",
        allow(*SAFE, "POST")(auth_views.LoginView.as_view(authentication_form=LoginForm)),
        name="login",
    ),
    # Opened as a link (a bookmark), it asks: logging out takes a POST.
    path(
        "accounts/logout/",
        page_and_form(
            TemplateView.as_view(template_name="registration/logout.html"),
            auth_views.LogoutView.as_view(),
        ),
        name="logout",
    ),
    path("admin/", admin.site.urls),
    path("", include("review_app.urls")),
]

handler400 = "review_app.errors.bad_request_page"
handler403 = "review_app.errors.permission_denied_page"
handler404 = "review_app.errors.not_found_page"
