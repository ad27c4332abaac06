"""Contradictions: a draft that disagrees with reviewed memory goes to a human.

A draft and a reviewed document are about the same subject when their
embeddings are close (cosine ≥ SUBJECT_MIN). They disagree when they state
different numbers or one negates what the other says; near-identical words
with one changed figure is exactly the case this is for. Each such pair becomes a `supersede`
review item: approving lets the draft replace the reviewed text at its
path (a new version, history kept); rejecting keeps the reviewed document.
A heuristic, so it only proposes: nothing is overwritten without a person.
The draft is `constrained` while the item is open; the reviewed document
stays as it is, trusted, since any agent can write a draft and unreviewed
text must not be a way to pull reviewed memory out of the trusted context.
A pair a reviewer decided is not asked about again unless one side changed
since, nor is a draft against the document a reviewer promoted it into or
refused to.
"""

from django.db import transaction
from pgvector.django import CosineDistance

from memory_app.dreams.claims import figures, negated
from memory_app.dreams.decisions import already_decided, promotion_decided
from memory_app.dreams.progress import Progress
from memory_app.dreams.proposals import propose
from memory_app.models import (
    DocState,
    DreamJob,
    MemoryDocument,
    ReviewAction,
    Scope,
    Trust,
)
from memory_app.selectors.search import set_vector_search_options

SUBJECT_MIN = 0.80
REVIEWED = (Trust.ADMIN_APPROVED, Trust.SYSTEM_SEEDED, Trust.USER_AUTHORED)


def disagree(a: str, b: str) -> bool:
    """Different figures, or a negation on one side only (see dreams/claims.py)."""
    return figures(a) != figures(b) or negated(a) != negated(b)


def _closest_reviewed(draft: MemoryDocument) -> MemoryDocument | None:
    with transaction.atomic():
        set_vector_search_options()
        return (
            MemoryDocument.objects.filter(
                store__scope__in=(Scope.WORKSPACE, Scope.SYSTEM),
                state=DocState.ACTIVE,
                trust__in=REVIEWED,
                embedding__isnull=False,
                embedding_model=draft.embedding_model,
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
        .only("id", "path", "title", "content", "version", "embedding", "embedding_model")
        .order_by("created_at")
    )
    progress.total(len(drafts))
    stats = {"drafts": len(drafts), "proposed": 0, "already_decided": 0}
    for draft in drafts:
        if outcome := _examine(job, draft):
            stats[outcome] += 1
        progress.advance()
    return stats


def _examine(job: DreamJob, draft: MemoryDocument) -> str | None:
    """Propose a supersede if the draft contradicts its closest reviewed document."""
    reviewed = _closest_reviewed(draft)
    if (
        reviewed is None
        or 1 - reviewed.distance < SUBJECT_MIN
        or not disagree(draft.content, reviewed.content)
    ):
        return None
    if already_decided(ReviewAction.SUPERSEDE, [draft, reviewed]) or promotion_decided(
        draft, reviewed
    ):
        return "already_decided"
    created = propose(
        job,
        draft,
        constrain=[draft],
        action=ReviewAction.SUPERSEDE,
        target_store=reviewed.store,
        target_path=reviewed.path,
        rationale=(
            f"This draft disagrees with reviewed memory at "
            f"{reviewed.store.label}/{reviewed.path}. Approve to replace it; "
            "reject to keep the reviewed text."
        ),
        related=[reviewed],
    )
    return "proposed" if created else None
