"""The API's error shape as exceptions: one class per `error` code that a caller
handles differently."""

from typing import Any


class ApiError(Exception):
    """An answer with `{"error", "detail", ...}`; `body` holds the extra fields."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        self.status = status
        self.code: str = str(body.get("error", "error"))
        self.detail: str = str(body.get("detail", ""))
        self.body = body
        super().__init__(f"{status} {self.code}: {self.detail}")


class InvalidInput(ApiError):
    @property
    def fields(self) -> dict[str, list[str]]:
        return self.body.get("fields", {})


class NotAuthenticated(ApiError):
    pass


class PermissionDenied(ApiError):
    """`permission_denied`, or `policy_denied` (with `reason`)."""


class NotFound(ApiError):
    pass


class Conflict(ApiError):
    """A stale `expected_sha256`: read again and retry."""

    @property
    def current_sha256(self) -> str | None:
        return self.body.get("current_sha256")


class WriteBlocked(ApiError):
    """The safety scanner refused the write; `findings` never include the text."""

    @property
    def findings(self) -> list[dict[str, Any]]:
        return self.body.get("findings", [])


class TooLarge(ApiError):
    """`too_large` (413): the body, a content or a transcript is over its limit."""


class RateLimited(ApiError):
    def __init__(self, status: int, body: dict[str, Any], retry_after: float) -> None:
        super().__init__(status, body)
        self.retry_after = retry_after


_BY_STATUS: dict[int, type[ApiError]] = {
    400: InvalidInput,
    401: NotAuthenticated,
    403: PermissionDenied,
    404: NotFound,
    409: Conflict,
    413: TooLarge,
    422: WriteBlocked,
}


def error_for(status: int, body: dict[str, Any], retry_after: float) -> ApiError:
    if status == 429:
        return RateLimited(status, body, retry_after)
    return _BY_STATUS.get(status, ApiError)(status, body)
