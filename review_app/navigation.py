"""The pages of DESIGN §6, in navigation order."""

from dataclasses import dataclass

from django.urls import reverse


@dataclass(frozen=True)
class Page:
    slug: str
    title: str
    summary: str
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
        counted=True,
    ),
    Page(
        "deletions",
        "Deletions",
        "Deletion requests from agents, for you to confirm or decline.",
        counted=True,
    ),
    Page("browser", "Memory browser", "Stores and documents, filters, search, version history."),
    Page("systems", "Systems", "The memory card of each system you can read."),
    Page("mine", "My memories", "Your private memories and the preferences agents saved."),
    Page("dreams", "Dream jobs", "Background consolidation, compaction and expiry runs."),
    Page("usage", "Usage audit", "What memory was injected into which run, and hit rates."),
    Page("events", "Events", "The live stream of memory events."),
)
