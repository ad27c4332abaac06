"""Consolidation: conversation drafts worth keeping become promotion proposals.

A draft qualifies when its author rated it important (≥ 7) or agents found
it useful in at least three different runs. A draft that was ever proposed
for promotion — by an agent or an earlier run, whatever the decision — is
never proposed again.
"""

from django.db.models import Count, Q

from memory_app.dreams.progress import Progress
from memory_app.dreams.proposals import consolidation_target, propose
from memory_app.models import (
    DocState,
    DreamJob,
    DreamReviewItem,
    MemoryDocument,
    ReviewAction,
    Scope,
    Trust,
)

IMPORTANCE_MIN = 7
RUNS_MIN = 3


def candidates():
    """Active conversation drafts that qualify and were never proposed."""
    return (
        MemoryDocument.objects.filter(
            store__scope=Scope.CONVERSATION, state=DocState.ACTIVE, trust=Trust.AGENT_DRAFT
        )
        .exclude(
            pk__in=DreamReviewItem.objects.filter(action=ReviewAction.PROMOTE).values(
                "source_document_id"
            )
        )
        .annotate(
            runs=Count(
                "usages__run_id",
                filter=Q(usages__hit=True) & ~Q(usages__run_id=""),
                distinct=True,
            )
        )
        .filter(Q(importance__gte=IMPORTANCE_MIN) | Q(runs__gte=RUNS_MIN))
        .select_related("store")
        .order_by("created_at")
    )


def consolidate(job: DreamJob, progress: Progress) -> dict:
    target = consolidation_target()
    if target is None:
        return {"proposed": 0, "skipped": "no consolidation target store"}
    drafts = list(candidates())
    progress.total(len(drafts))
    proposed = 0
    for draft in drafts:
        reason = (
            f"Rated {draft.importance}/10 by its author"
            if draft.importance >= IMPORTANCE_MIN
            else f"Marked useful in {draft.runs} runs"
        )
        proposed += propose(
            job,
            draft,
            target_store=target,
            target_path=draft.path,
            rationale=f"{reason}; from conversation {draft.store.slug}.",
        )
        progress.advance()
    return {"candidates": len(drafts), "proposed": proposed}
