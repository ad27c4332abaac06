"""API key authentication: `Authorization: Token <key>` or `Bearer <key>`."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions

from memory_app.services.principals import api_key_find

_SCHEMES = {b"token", b"bearer"}


class ApiKeyAuthentication(authentication.BaseAuthentication):
    def authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() not in _SCHEMES:
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("Send 'Authorization: Token <key>'.")
        try:
            raw_key = header[1].decode("ascii")
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed("Invalid API key.") from None
        # A tool call's turn is read with its key (api/context.py).
        view = (getattr(request, "parser_context", None) or {}).get("view")
        wanted = getattr(view, "turn_wanted", None)
        key = api_key_find(raw_key, turn=wanted(request) if wanted else None)
        if key is None:
            raise exceptions.AuthenticationFailed("Invalid API key.")
        # The key itself is `request.auth`: throttles count per key.
        return (key.user, key)

    def authenticate_header(self, request):
        return 'Token realm="api"'


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = ApiKeyAuthentication
    name = "apiKey"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "`Authorization: Token <key>` or `Authorization: Bearer <key>`.",
        }
