"""The pages of DESIGN §6, in navigation order.

`built` is False for pages whose screens are not written yet; their links
lead to a page that says so plainly instead of a dead end.
"""

from dataclasses import dataclass

from django.urls import reverse


@dataclass(frozen=True)
class Page:
    slug: str
    title: str
    summary: str
    built: bool = False

    @property
    def url(self) -> str:
        if self.built:
            return reverse(f"review:{self.slug}")
        return reverse("review:page", args=[self.slug])


PAGES = (
    Page(
        "queue",
        "Review queue",
        "Pending promotion proposals: diff, findings, approve or reject.",
        built=True,
    ),
    Page(
        "deletions",
        "Deletions",
        "Deletion requests from agents, for you to confirm or decline.",
        built=True,
    ),
    Page(
        "browser",
        "Memory browser",
        "Stores and documents, filters, search, version history.",
        built=True,
    ),
    Page("systems", "Systems", "The memory card of each system you can read.", built=True),
    Page(
        "mine",
        "My memories",
        "Your private memories and the preferences agents saved.",
        built=True,
    ),
    Page(
        "dreams",
        "Dream jobs",
        "Background consolidation, compaction and expiry runs.",
        built=True,
    ),
    Page("usage", "Usage audit", "What memory was injected into which run, and hit rates."),
    Page("events", "Events", "The live stream of memory events."),
)
PAGES_BY_SLUG = {page.slug: page for page in PAGES}
