"""URL configuration: the REST API under /api/v1/, Django admin under /admin/, the browser UI
(webapp.ui) at every other path but /static/."""

from __future__ import annotations

from django.contrib import admin
from django.urls import URLPattern, URLResolver, include, path, re_path
from drf_spectacular.views import SpectacularAPIView

from accounts.team_views import (
    PrincipalListView,
    TeamDetailView,
    TeamListView,
    TeamMemberListView,
    TeamMemberView,
)
from accounts.token_views import TokenDetailView, TokenListView
from accounts.views import (
    CsrfView,
    LoginView,
    LogoutView,
    MeView,
    SessionView,
    TokenView,
    UsersView,
    admin_login,
)
from webapp.docs import DocsView
from webapp.health import HealthView
from webapp.ui import ui_index

api_v1: list[URLPattern | URLResolver] = [
    re_path(r"^health/?$", HealthView.as_view(), name="health"),
    re_path(r"^auth/token/?$", TokenView.as_view(), name="auth-token"),
    re_path(r"^auth/tokens/?$", TokenListView.as_view(), name="auth-tokens"),
    re_path(
        r"^auth/tokens/(?P<token_id>[0-9]{1,18})/?$",
        TokenDetailView.as_view(),
        name="auth-token-detail",
    ),
    re_path(r"^auth/login/?$", LoginView.as_view(), name="auth-login"),
    re_path(r"^auth/logout/?$", LogoutView.as_view(), name="auth-logout"),
    re_path(r"^auth/csrf/?$", CsrfView.as_view(), name="auth-csrf"),
    re_path(r"^auth/session/?$", SessionView.as_view(), name="auth-session"),
    re_path(r"^users/?$", UsersView.as_view(), name="users"),
    re_path(r"^users/me/?$", MeView.as_view(), name="users-me"),
    re_path(r"^teams/?$", TeamListView.as_view(), name="team-list"),
    re_path(r"^teams/(?P<team>[^/]+)/?$", TeamDetailView.as_view(), name="team-detail"),
    re_path(
        r"^teams/(?P<team>[^/]+)/members/?$",
        TeamMemberListView.as_view(),
        name="team-member-list",
    ),
    re_path(
        r"^teams/(?P<team>[^/]+)/members/(?P<username>[^/]+)/?$",
        TeamMemberView.as_view(),
        name="team-member",
    ),
    re_path(r"^principals/?$", PrincipalListView.as_view(), name="principal-list"),
    path("", include("audit.urls")),
    re_path(r"^schema/?$", SpectacularAPIView.as_view(), name="schema"),
    re_path(r"^docs/?$", DocsView.as_view(url_name="schema"), name="docs"),
    path("", include("catalog.urls")),
    path("", include("sessions.urls")),
    path("", include("jobs.urls")),
    path("", include("results.urls")),
    path("", include("tabledata.urls")),
    path("", include("workbench.urls")),
    path("", include("schedules.urls")),
    path("", include("dashboards.urls")),
]

urlpatterns = [
    path("api/v1/", include(api_v1)),
    # The admin's login form behind the sign-in throttle (the same count as /api/v1/auth/…):
    # matched before the admin's own URLs, and reverse("admin:login") names this path.
    path("admin/login/", admin_login, name="admin-login"),
    path("admin/", admin.site.urls),
    # HiveServer2 over HTTP (docs/api.md, "HiveServer2"): Thrift calls, Basic credentials.
    path("", include("hiveserver2.urls")),
    # The UI's client-side routes: anything not under api/, admin/ or static/ (unknown API
    # paths stay JSON 404s; /admin and /static without a slash are not UI routes either).
    re_path(r"^(?!(?:api|admin|static|cliservice)(?:/|$))", ui_index, name="ui"),
]

handler400 = "webapp.errors.json_bad_request"
handler403 = "webapp.errors.json_permission_denied"
handler404 = "webapp.errors.json_not_found"
handler500 = "webapp.errors.json_server_error"
