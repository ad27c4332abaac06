"""X-Memory-On-Behalf-Of: who may send it, and whom it may name (API.md).

The right is checked for every API request, whatever the endpoint, so the
header never passes silently; endpoints that read as a principal resolve
the named user with `principal_for`.
"""

from django.contrib.auth.models import AbstractBaseUser
from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from memory_app.access import access_user_by_name
from memory_app.errors import PermissionDenied
from memory_app.permissions import can_act_on_behalf, is_service_account

HEADER = "X-Memory-On-Behalf-Of"


class OnBehalfOfAllowed(BasePermission):
    """A 403 for a principal without the act-on-behalf right sending the header."""

    message = "You may not act on behalf of other users."

    def has_permission(self, request: Request, view) -> bool:
        return HEADER not in request.headers or can_act_on_behalf(request.user)


def principal_for(request: Request) -> AbstractBaseUser:
    """The user the request is evaluated as: the named user, or the caller.

    Only people are a target (API.md: "that user"), never staff or
    superusers, whose rights would pass to whoever holds the act-on-behalf
    right, nor service accounts: an agent's conversations are its own, and
    one agent holding the right would otherwise read and write every other
    agent's.
    """
    name = request.headers.get(HEADER)
    if name is None:
        return request.user
    if not can_act_on_behalf(request.user):
        raise PermissionDenied(OnBehalfOfAllowed.message)
    user = access_user_by_name(name.strip())
    if user.is_staff or user.is_superuser:
        raise PermissionDenied("Nobody acts on behalf of staff or superusers.")
    if is_service_account(user):
        raise PermissionDenied("Nobody acts on behalf of a service account.")
    return user
