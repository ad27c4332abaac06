"""The pages of DESIGN §6, in navigation order, each with who may use it.

The navigation lists only the pages a person may use: a link that answers
403 is a promise the page then breaks.
"""

from collections.abc import Callable
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.urls import reverse

from memory_app.permissions import can_curate_some_store, can_decide_reviews, has_memory_permission

User = AbstractBaseUser | AnonymousUser


def _readers(user: User) -> bool:
    return has_memory_permission(user, "read_memory")


def _everyone(user: User) -> bool:
    return user.is_authenticated


@dataclass(frozen=True)
class Page:
    slug: str
    title: str
    summary: str
    usable_by: Callable[[User], bool] = _everyone
    # Pages with a badge of what waits there serve its count at "<slug>-count".
    counted: bool = False

    @property
    def url(self) -> str:
        return reverse(f"review:{self.slug}")

    @property
    def count_url(self) -> str:
        return reverse(f"review:{self.slug}-count")


PAGES = (
    Page(
        "queue",
        "Review queue",
        "Pending promotion proposals: diff, findings, approve or reject.",
        can_decide_reviews,
        counted=True,
    ),
    Page(
        "deletions",
        "Deletions",
        "Deletion requests from agents, for you to confirm or decline.",
        can_curate_some_store,
        counted=True,
    ),
    Page(
        "browser",
        "Memory browser",
        "Stores and documents, filters, search, version history.",
        _readers,
    ),
    Page("systems", "Systems", "The memory card of each system you can read.", _readers),
    Page(
        "mine",
        "My memories",
        "Your private memories and the preferences agents saved.",
        _readers,
    ),
    Page("dreams", "Dream jobs", "Background consolidation, compaction and expiry runs."),
    Page("usage", "Usage audit", "What memory was injected into which run, and hit rates."),
    Page("events", "Events", "The live stream of memory events."),
)


def pages_for(user: User) -> list[Page]:
    """The pages this person may use, in navigation order."""
    return [page for page in PAGES if page.usable_by(user)]
