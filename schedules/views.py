"""/schedules, /alerts and /notifications. Thin: parse, call one service or selector,
serialize. Only the owner sees a schedule or its alerts: anyone else's id is NOT_FOUND."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from schedules import selectors, services
from schedules import serializers as s
from webapp.api import PAGE_PARAMS, page_of, valid_body
from webapp.pagination import page_body, page_request


def _page(request: Request, rows: Any, key: Any, out: Any) -> Response:
    page = page_request(request)
    return Response(
        page_body(rows(page), page, key, serialize_page=lambda shown: out(shown, many=True).data)
    )


class ScheduleListView(APIView):
    @extend_schema(
        parameters=PAGE_PARAMS,
        responses=page_of("SchedulePage", s.ScheduleOut(many=True)),
        description="Your schedules, oldest first.",
    )
    def get(self, request: Request) -> Response:
        return _page(
            request,
            lambda p: selectors.schedule_list(user=request.user, after=p.after, limit=p.size + 1),
            selectors.page_key,
            s.ScheduleOut,
        )

    @extend_schema(request=s.ScheduleIn, responses={201: s.ScheduleOut})
    def post(self, request: Request) -> Response:
        body = valid_body(s.ScheduleIn, request)
        row = services.schedule_create(
            user=request.user,
            saved_query=body["saved_query"],
            cron_expression=body["cron"],
            timezone_name=body["timezone"],
            enabled=body["enabled"],
        )
        return Response(s.ScheduleOut(row).data, status=201)


class ScheduleDetailView(APIView):
    @extend_schema(responses=s.ScheduleOut)
    def get(self, request: Request, schedule: str) -> Response:
        row = selectors.schedule_get(user=request.user, schedule_id=schedule)
        return Response(s.ScheduleOut(row).data)

    @extend_schema(request=s.SchedulePatch, responses=s.ScheduleOut)
    def patch(self, request: Request, schedule: str) -> Response:
        changes = valid_body(s.SchedulePatch, request)
        row = selectors.schedule_get(user=request.user, schedule_id=schedule)
        updated = services.schedule_update(user=request.user, row=row, changes=changes)
        return Response(s.ScheduleOut(updated).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, schedule: str) -> Response:
        services.schedule_delete(
            row=selectors.schedule_get(user=request.user, schedule_id=schedule)
        )
        return Response(status=204)


class ScheduleRunListView(APIView):
    @extend_schema(
        parameters=PAGE_PARAMS,
        responses=page_of("ScheduleRunPage", s.ScheduleRunOut(many=True)),
        description="The schedule's runs, the latest slot first, with the jobs they started.",
    )
    def get(self, request: Request, schedule: str) -> Response:
        row = selectors.schedule_get(user=request.user, schedule_id=schedule)
        return _page(
            request,
            lambda p: selectors.run_list(schedule=row, after=p.after, limit=p.size + 1),
            selectors.run_page_key,
            s.ScheduleRunOut,
        )


class AlertListView(APIView):
    @extend_schema(
        parameters=[
            *PAGE_PARAMS,
            OpenApiParameter("schedule", str, description="only this schedule's alerts"),
        ],
        responses=page_of("AlertPage", s.AlertOut(many=True)),
        description="The alerts of your schedules, oldest first.",
    )
    def get(self, request: Request) -> Response:
        wanted = request.query_params.get("schedule")
        schedule = selectors.schedule_get(user=request.user, schedule_id=wanted) if wanted else None
        return _page(
            request,
            lambda p: selectors.alert_list(
                user=request.user, schedule=schedule, after=p.after, limit=p.size + 1
            ),
            selectors.page_key,
            s.AlertOut,
        )

    @extend_schema(request=s.AlertIn, responses={201: s.AlertOut})
    def post(self, request: Request) -> Response:
        body = valid_body(s.AlertIn, request)
        schedule = selectors.schedule_get(user=request.user, schedule_id=body.pop("schedule"))
        row = services.alert_create(user=request.user, schedule=schedule, **body)
        return Response(s.AlertOut(row).data, status=201)


class AlertDetailView(APIView):
    @extend_schema(responses=s.AlertOut)
    def get(self, request: Request, alert: str) -> Response:
        return Response(s.AlertOut(selectors.alert_get(user=request.user, alert_id=alert)).data)

    @extend_schema(request=s.AlertPatch, responses=s.AlertOut)
    def patch(self, request: Request, alert: str) -> Response:
        changes = valid_body(s.AlertPatch, request)
        row = selectors.alert_get(user=request.user, alert_id=alert)
        return Response(s.AlertOut(services.alert_update(row=row, changes=changes)).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, alert: str) -> Response:
        services.alert_delete(row=selectors.alert_get(user=request.user, alert_id=alert))
        return Response(status=204)


class NotificationListView(APIView):
    @extend_schema(
        parameters=[
            *PAGE_PARAMS,
            OpenApiParameter("unread", bool, description="only the unread ones"),
        ],
        responses=page_of("NotificationPage", s.NotificationOut(many=True)),
        description="Your notifications (alerts that triggered or cleared), newest first.",
    )
    def get(self, request: Request) -> Response:
        unread = request.query_params.get("unread", "").lower() in {"1", "true", "yes"}
        return _page(
            request,
            lambda p: selectors.notification_list(
                user=request.user, unread_only=unread, after=p.after, limit=p.size + 1
            ),
            selectors.page_key,
            s.NotificationOut,
        )


class NotificationUnreadView(APIView):
    @extend_schema(responses=s.UnreadOut, description="How many of your notifications are unread.")
    def get(self, request: Request) -> Response:
        return Response(s.UnreadOut({"unread": selectors.unread_count(user=request.user)}).data)


class NotificationReadView(APIView):
    @extend_schema(request=None, responses=s.NotificationOut, description="Mark it read.")
    def post(self, request: Request, notification: str) -> Response:
        row = selectors.notification_get(user=request.user, notification_id=notification)
        return Response(s.NotificationOut(services.notification_read(row=row)).data)


class NotificationReadAllView(APIView):
    @extend_schema(request=None, responses=s.ReadAllOut, description="Mark every one read.")
    def post(self, request: Request) -> Response:
        marked = services.notifications_read_all(user=request.user)
        return Response(s.ReadAllOut({"marked": marked}).data)
