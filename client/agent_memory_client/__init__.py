"""A typed client for the Agent Memory Admin tool API."""

from agent_memory_client.client import UNSET, Conversation, MemoryClient, Unset
from agent_memory_client.errors import (
    ApiError,
    Conflict,
    InvalidInput,
    NotAuthenticated,
    NotFound,
    PermissionDenied,
    RateLimited,
    TooLarge,
    WriteBlocked,
)

__all__ = [
    "UNSET",
    "ApiError",
    "Conflict",
    "Conversation",
    "InvalidInput",
    "MemoryClient",
    "NotAuthenticated",
    "NotFound",
    "PermissionDenied",
    "RateLimited",
    "TooLarge",
    "Unset",
    "WriteBlocked",
]
