"""URL configuration: the REST API under /api/v1/, Django admin under /admin/."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest, HttpResponseRedirect
from django.urls import URLPattern, URLResolver, include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from accounts.views import MeView, TokenView, UsersView
from webapp.health import HealthView

api_v1: list[URLPattern | URLResolver] = [
    re_path(r"^health/?$", HealthView.as_view(), name="health"),
    re_path(r"^auth/token/?$", TokenView.as_view(), name="auth-token"),
    re_path(r"^users/?$", UsersView.as_view(), name="users"),
    re_path(r"^users/me/?$", MeView.as_view(), name="users-me"),
    re_path(r"^schema/?$", SpectacularAPIView.as_view(), name="schema"),
    re_path(r"^docs/?$", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
    path("", include("catalog.urls")),
    path("", include("jobs.urls")),
]


def home(request: HttpRequest) -> HttpResponseRedirect:
    # Until the browser UI lands, the front door is the API's own documentation.
    return HttpResponseRedirect("/api/v1/docs")


urlpatterns = [
    path("api/v1/", include(api_v1)),
    path("admin/", admin.site.urls),
    path("", home, name="home"),
]

handler400 = "webapp.errors.json_bad_request"
handler403 = "webapp.errors.json_permission_denied"
handler404 = "webapp.errors.json_not_found"
handler500 = "webapp.errors.json_server_error"
