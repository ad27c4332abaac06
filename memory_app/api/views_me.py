"""`GET /api/v1/me`: who the key belongs to and what it may do."""

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.response import Response

from memory_app.permissions import (
    can_act_on_behalf,
    can_review,
    has_memory_permission,
    is_service_account,
)


@extend_schema(
    summary="The authenticated principal and its rights",
    responses=inline_serializer(
        "Me",
        {
            "username": serializers.CharField(),
            "service_account": serializers.BooleanField(),
            "permissions": serializers.ListField(child=serializers.CharField()),
        },
    ),
)
@api_view(["GET", "HEAD"])
def me(request: Request) -> Response:
    user = request.user
    rights = {
        "read_memory": has_memory_permission(user, "read_memory"),
        "manage_memory": has_memory_permission(user, "manage_memory"),
        "review_promotions": can_review(user),
        "act_on_behalf": can_act_on_behalf(user),
    }
    return Response(
        {
            "username": user.get_username(),
            "service_account": is_service_account(user),
            "permissions": sorted(name for name, granted in rights.items() if granted),
        }
    )
