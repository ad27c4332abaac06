"""A typed client for the Agent Memory Admin tool API."""

from agent_memory_client.client import Conversation, MemoryClient
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
    "WriteBlocked",
]
