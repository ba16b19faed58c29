"""The status-coded error tree. Services raise these; transports render them (HTTP: one JSON
handler in app.main; MCP: a tool error with the same message)."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import ValidationError

from app.schemas import ErrorBody


def error_body(code: str, message: str, details: Any = None) -> dict[str, Any]:
    """API.md's error body, `{"error": {"code", "message", "details"?}}`: the one place it is
    built, for the errors we raise and for those the framework and the edge answer."""
    error: dict[str, Any] = {"code": code, "message": message}
    if details is not None:
        error["details"] = details
    return {"error": error}


def oauth_error_body(error: str, description: str) -> dict[str, str]:
    """An RFC 6749 §5.2 error object, which the OAuth routes answer instead of API.md's."""
    return {"error": error, "error_description": description}


class AppError(Exception):
    """An error a caller can act on: a status, a stable snake_case code and a message for people."""

    status: ClassVar[int] = 500
    # Each class's code; an instance may carry another (a run's failure carries the code of
    # the event that ended it).
    code: str = "internal"

    def __init__(
        self,
        message: str,
        *,
        details: Any = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.details = details
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        """The JSON body of API.md's error convention."""
        return error_body(self.code, self.message, self.details)

    @classmethod
    def openapi(cls) -> dict[str, Any]:
        """The OpenAPI `responses` entry for this error."""
        return {"model": ErrorBody, "description": cls.__doc__ or cls.code}


class BadRequest(AppError):
    """The request is malformed."""

    status = 400
    code = "bad_request"


class ValidationFailed(AppError):
    """The input is invalid."""

    status = 422
    code = "validation_error"

    @classmethod
    def from_pydantic(cls, exc: ValidationError) -> ValidationFailed:
        """The first error of a model built in code, as `<where>: <why>` (never the input)."""
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"])
        return cls(f"{where}: {first['msg']}")


class Unauthorized(AppError):
    """No valid credential was presented."""

    status = 401
    code = "unauthenticated"

    def __init__(self, message: str, *, details: Any = None, challenge: str = "Bearer") -> None:
        super().__init__(message, details=details, headers={"WWW-Authenticate": challenge})


class InvalidCredentials(AppError):
    """The email and password do not match an account that may sign in."""

    status = 401
    code = "invalid_credentials"


class Forbidden(AppError):
    """The caller may not do this."""

    status = 403
    code = "forbidden"


class SignupClosed(AppError):
    """Sign-up is closed."""

    status = 403
    code = "signup_closed"


class NotFound(AppError):
    """No such resource, or the caller may not see it."""

    status = 404
    code = "not_found"


class MethodNotAllowed(AppError):
    """The resource does not accept this method."""

    status = 405
    code = "method_not_allowed"


class Conflict(AppError):
    """The change conflicts with the current state."""

    status = 409
    code = "conflict"


class TooLarge(AppError):
    """The payload exceeds a configured limit."""

    status = 413
    code = "payload_too_large"


class UnsupportedMediaType(AppError):
    """The content type cannot be handled."""

    status = 415
    code = "unsupported_media_type"


class RateLimited(AppError):
    """Too many requests; retry after the given number of seconds."""

    status = 429
    code = "rate_limited"

    def __init__(self, message: str, *, retry_after_s: int, details: Any = None) -> None:
        super().__init__(message, details=details, headers={"Retry-After": str(retry_after_s)})


class Unavailable(AppError):
    """A dependency (database, model) is not available."""

    status = 503
    code = "unavailable"
