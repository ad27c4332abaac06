"""The one family of errors that services raise.

Each carries the API's error code and HTTP status (API.md, "Errors"); the
API maps them once to the JSON error shape, the pages once to messages.
"""

import re
from typing import Any

from django.conf import settings


class ApplicationError(Exception):
    code = "invalid_input"
    status = 400

    def __init__(self, detail: str, **extra: Any) -> None:
        super().__init__(detail)
        self.detail = detail
        self.extra = extra


class InvalidInput(ApplicationError):
    """Input failed validation; `fields` maps field names to messages."""

    def __init__(self, detail: str, *, fields: dict[str, list[str]] | None = None) -> None:
        super().__init__(detail, fields=fields or {})


class PermissionDenied(ApplicationError):
    code = "permission_denied"
    status = 403


class PolicyDenied(ApplicationError):
    code = "policy_denied"
    status = 403

    def __init__(self, detail: str, *, reason: str) -> None:
        super().__init__(detail, event="memory.policy.denied", reason=reason)


class NotFound(ApplicationError):
    code = "not_found"
    status = 404


class Conflict(ApplicationError):
    code = "conflict"
    status = 409

    def __init__(self, detail: str, *, current_sha256: str, current_version: int) -> None:
        super().__init__(detail, current_sha256=current_sha256, current_version=current_version)


class TooLarge(ApplicationError):
    code = "too_large"
    status = 413

    @classmethod
    def body(cls) -> "TooLarge":
        """A request body over MEMORY_MAX_BODY_BYTES, however it was found
        (while received, read or parsed): one answer for all."""
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return cls(f"The request body is over the size limit of {limit} bytes.")


class WriteBlocked(ApplicationError):
    code = "write_blocked"
    status = 422

    def __init__(self, detail: str, *, findings: list[dict[str, Any]]) -> None:
        super().__init__(detail, event="memory.write.blocked", findings=findings)


class RateLimited(ApplicationError):
    code = "rate_limited"
    status = 429

    def __init__(self, detail: str, *, retry_after: int) -> None:
        super().__init__(detail)
        self.retry_after = retry_after


# A name as callers write them, without a run of letters and digits as long
# as a key's or a token's.
_NAME_LIKE = re.compile(r"[a-z0-9][a-z0-9_.:/-]{0,99}")
_TOKEN_RUN = re.compile(r"[A-Za-z0-9]{20,}")


def reads_as_name(value: object) -> bool:
    """Whether a message may repeat `value`, a name the caller sent that
    matched nothing. It may be a secret pasted in the wrong place, and
    messages go back into the caller's context and into logs."""
    return isinstance(value, str) and bool(
        _NAME_LIKE.fullmatch(value) and not _TOKEN_RUN.search(value)
    )


def named(value: object) -> str:
    """`value` quoted when it reads as a name; otherwise "that name"."""
    return repr(value) if reads_as_name(value) else "that name"
