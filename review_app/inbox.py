"""What the home page shows a person: what waits for them, and how memory fares.

Each figure is one aggregate query over what the person may see or decide
(memory_app.access, memory_app.policy), so the page costs the same with ten
waiting items or ten thousand.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, Exists, Min, OuterRef, Q
from django.urls import reverse
from django.utils import timezone

from memory_app.access import dream_jobs_readable, events_readable, usages_readable
from memory_app.models import DreamKind, DreamReviewItem, JobStatus
from memory_app.permissions import can_curate_some_store, can_decide_reviews
from memory_app.selectors.review import TARGET_STORE_SELECT
from review_app.selectors import deletion_requests_for, pending_count_and_oldest

DECISIONS_SHOWN = 8
# The inbox's hit rate covers this many days; it links to the usage audit's
# hit rates over the same days (`?view=documents&days=7`).
HIT_RATE_DAYS = 7


@dataclass(frozen=True)
class Waiting:
    """One kind of thing waiting for the person: how many, since when, where."""

    title: str
    count: int
    oldest: datetime | None
    url: str


@dataclass(frozen=True)
class HitRate:
    injected: int
    used: int

    @property
    def percent(self) -> int | None:
        return round(100 * self.used / self.injected) if self.injected else None


def waiting_for(user: AbstractBaseUser) -> list[Waiting]:
    """Proposals, deletion requests, rescan flags and failed dream jobs the
    person may decide or act on; kinds they may not act on are left out."""
    waiting = []
    if can_decide_reviews(user):
        count, oldest = pending_count_and_oldest()
        waiting.append(Waiting("Promotion proposals", count, oldest, reverse("review:queue")))
    if can_curate_some_store(user):
        rescan = Q(job__kind=DreamKind.RESCAN)
        # By id: the curatable-stores filter joins participants, hence DISTINCT.
        figures = DreamReviewItem.objects.filter(
            pk__in=deletion_requests_for(user).values("pk")
        ).aggregate(
            requests=Count("id", filter=~rescan),
            requests_oldest=Min("created_at", filter=~rescan),
            flags=Count("id", filter=rescan),
            flags_oldest=Min("created_at", filter=rescan),
        )
        url = reverse("review:deletions")
        waiting += [
            Waiting("Deletion requests", figures["requests"], figures["requests_oldest"], url),
            Waiting("Rescan flags", figures["flags"], figures["flags_oldest"], url),
        ]
    if can_decide_reviews(user):
        count, oldest = failed_dream_jobs(user)
        waiting.append(Waiting("Failed dream jobs", count, oldest, reverse("review:dreams")))
    return waiting


def failed_dream_jobs(user: AbstractBaseUser) -> tuple[int, datetime | None]:
    """Failed runs no later run of the same kind has made good."""
    jobs = dream_jobs_readable(user)
    later_success = jobs.filter(
        kind=OuterRef("kind"), status=JobStatus.SUCCEEDED, created_at__gt=OuterRef("created_at")
    )
    figures = (
        jobs.filter(status=JobStatus.FAILED)
        .exclude(Exists(later_success))
        .aggregate(count=Count("id"), oldest=Min("created_at"))
    )
    return figures["count"], figures["oldest"]


def recent_decisions(user: AbstractBaseUser) -> list[DreamReviewItem]:
    """The person's own latest decisions, newest first."""
    return list(
        DreamReviewItem.objects.filter(decided_by=user)
        .select_related(*TARGET_STORE_SELECT, "result_version")
        .order_by("-decided_at")[:DECISIONS_SHOWN]
    )


def scanner_blocks_today(user: AbstractBaseUser) -> int:
    """Writes the scanner refused since midnight (server time), among the
    events the person may see."""
    midnight = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
    return (
        events_readable(user).filter(type="memory.write.blocked", created_at__gte=midnight).count()
    )


def injected_hit_rate(user: AbstractBaseUser, days: int = HIT_RATE_DAYS) -> HitRate:
    """Injected documents marked used by the agent, over the last `days`."""
    figures = (
        usages_readable(user)
        .filter(created_at__gte=timezone.now() - timedelta(days=days))
        .aggregate(injected=Count("id"), used=Count("id", filter=Q(hit=True)))
    )
    return HitRate(figures["injected"], figures["used"])
