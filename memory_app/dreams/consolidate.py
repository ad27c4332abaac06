"""Consolidation: conversation drafts their authors rated important become proposals.

A draft qualifies when its author rated it important (≥ 7). Drafts that
earned promotion by being used are proposed by the usage job
(dreams/usage.py), with the measured evidence. A draft that was ever
proposed for promotion — by an agent or an earlier run, whatever the
decision — is never proposed again.
"""

from memory_app.dreams.progress import Progress
from memory_app.dreams.proposals import (
    consolidation_target,
    ever_proposed_for_promotion,
    propose,
)
from memory_app.models import (
    DocState,
    DreamJob,
    MemoryDocument,
    Scope,
    Trust,
)

IMPORTANCE_MIN = 7


def candidates():
    """Active conversation drafts that qualify and were never proposed."""
    return (
        MemoryDocument.objects.filter(
            store__scope=Scope.CONVERSATION, state=DocState.ACTIVE, trust=Trust.AGENT_DRAFT
        )
        .exclude(pk__in=ever_proposed_for_promotion())
        .filter(importance__gte=IMPORTANCE_MIN)
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
        proposed += propose(
            job,
            draft,
            target_store=target,
            target_path=draft.path,
            rationale=(f"Rated {draft.importance}/10 by its author; from {draft.store.label}."),
        )
        progress.advance()
    return {"candidates": len(drafts), "proposed": proposed}
