"""Contradictions: a draft that disagrees with reviewed memory goes to a human.

A draft and a reviewed document are about the same subject when their
embeddings are close (cosine ≥ SUBJECT_MIN). They disagree when they state
different numbers or one negates what the other says; near-identical words
with one changed figure is exactly the case this is for. Each such pair becomes a `supersede`
review item: approving lets the draft replace the reviewed text at its
path (a new version, history kept); rejecting keeps the reviewed document.
A heuristic, so it only proposes: nothing is overwritten without a person.
"""

import re

from django.db import transaction
from pgvector.django import CosineDistance

from memory_app.dreams.progress import Progress
from memory_app.dreams.proposals import propose
from memory_app.models import (
    DocState,
    DreamJob,
    DreamReviewItem,
    MemoryDocument,
    ReviewAction,
    Scope,
    Trust,
)
from memory_app.selectors.search import set_vector_search_options

SUBJECT_MIN = 0.80
REVIEWED = (Trust.ADMIN_APPROVED, Trust.SYSTEM_SEEDED, Trust.USER_AUTHORED)
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
_NEGATION = re.compile(r"\b(?:not|never|no longer|don't|do not|must not|avoid|stop)\b", re.I)


def disagree(a: str, b: str) -> bool:
    """Different figures, or a negation on one side only."""
    if set(_NUMBER.findall(a)) != set(_NUMBER.findall(b)):
        return True
    return bool(_NEGATION.search(a)) != bool(_NEGATION.search(b))


def _closest_reviewed(draft: MemoryDocument) -> MemoryDocument | None:
    with transaction.atomic():
        set_vector_search_options()
        return (
            MemoryDocument.objects.filter(
                store__scope__in=(Scope.WORKSPACE, Scope.SYSTEM),
                state=DocState.ACTIVE,
                trust__in=REVIEWED,
                embedding__isnull=False,
            )
            .annotate(distance=CosineDistance("embedding", draft.embedding))
            .select_related("store")
            .order_by("distance")
            .only("id", "path", "content", "version", "store__slug", "store__scope")
            .first()
        )


def contradictions(job: DreamJob, progress: Progress) -> dict:
    drafts = list(
        MemoryDocument.objects.filter(
            trust=Trust.AGENT_DRAFT, state=DocState.ACTIVE, embedding__isnull=False
        )
        .exclude(
            pk__in=DreamReviewItem.objects.filter(action=ReviewAction.SUPERSEDE).values(
                "source_document_id"
            )
        )
        .only("id", "path", "title", "content", "version", "embedding")
        .order_by("created_at")
    )
    progress.total(len(drafts))
    proposed = 0
    for draft in drafts:
        reviewed = _closest_reviewed(draft)
        if (
            reviewed is not None
            and 1 - reviewed.distance >= SUBJECT_MIN
            and disagree(draft.content, reviewed.content)
        ):
            proposed += propose(
                job,
                draft,
                action=ReviewAction.SUPERSEDE,
                target_store=reviewed.store,
                target_path=reviewed.path,
                rationale=(
                    f"This draft disagrees with reviewed memory at "
                    f"{reviewed.store.slug}/{reviewed.path}. Approve to replace it; "
                    "reject to keep the reviewed text."
                ),
                related=[reviewed],
            )
        progress.advance()
    return {"drafts": len(drafts), "proposed": proposed}
