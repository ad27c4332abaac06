"""Usage feedback: what agents actually use decides what memory keeps.

Every injection is a MemoryUsage row and `memory_mark_used` marks the
ones a turn relied on, so each document has a measured hit rate. Two
proposals follow from it, both for a human to decide:

- A document retrieved into at least MEMORY_USAGE_INJECTED_MIN turns in
  its current version and never marked used is noise in every context it
  enters: it is proposed for review (demote, rewrite or tombstone) with
  its figures. Only proposed: never citing a document is a guess at its
  worth, so it keeps its place in the trusted context until a person
  decides. Pinned documents are not judged this way: a pin injects them
  every turn by rule, not for relevance (in a shared store, a rule a
  reviewer set), and a convention every turn carries is rarely the thing
  a turn cites.
- An agent draft marked used in at least MEMORY_USAGE_USED_MIN different
  conversations or runs has earned a place in shared memory: it is
  proposed for promotion with that evidence. This replaces a guessed
  importance with what happened.

A document decided on once is not proposed again until it changes.
"""

from django.conf import settings
from django.db.models import Count, F, Q

from memory_app.dreams.decisions import already_decided
from memory_app.dreams.progress import Progress
from memory_app.dreams.proposals import (
    consolidation_target,
    ever_proposed_for_promotion,
    propose,
    propose_review,
)
from memory_app.models import (
    ContextBlock,
    DocState,
    DreamJob,
    DreamKind,
    MemoryDocument,
    ReviewAction,
    Scope,
    Trust,
)

FIELDS = ("id", "store_id", "path", "title", "content", "version", "store__slug")


# Injections a document earned by relevance; a pinned one is injected by rule.
RETRIEVED = Q(usages__block__in=(ContextBlock.TRUSTED, ContextBlock.UNTRUSTED))


def _current(**extra) -> Count:
    """Retrievals of the head version (a rewrite starts a fresh record)."""
    return Count(
        "usages", filter=RETRIEVED & Q(usages__version=F("version"), **extra), distinct=True
    )


def unused():
    """Live, unpinned documents retrieved often in their current version,
    never marked used."""
    return (
        MemoryDocument.objects.filter(state=DocState.ACTIVE, always_inject=False)
        .annotate(
            injected=_current(),
            hits=_current(usages__hit=True),
            conversations=Count(
                "usages__conversation",
                filter=RETRIEVED & Q(usages__version=F("version")),
                distinct=True,
            ),
        )
        .filter(injected__gte=settings.MEMORY_USAGE_INJECTED_MIN, hits=0)
        .select_related("store")
        .only(*FIELDS)
        .order_by("-injected")
    )


def well_used():
    """Agent drafts marked used in several conversations or runs, never proposed."""
    used_min = settings.MEMORY_USAGE_USED_MIN
    hit = Q(usages__hit=True)
    return (
        MemoryDocument.objects.filter(
            store__scope__in=(Scope.CONVERSATION, Scope.USER),
            state=DocState.ACTIVE,
            trust=Trust.AGENT_DRAFT,
        )
        .exclude(pk__in=ever_proposed_for_promotion())
        .annotate(
            injected=Count("usages", distinct=True),
            hits=Count("usages", filter=hit, distinct=True),
            conversations=Count("usages__conversation", filter=hit, distinct=True),
            runs=Count("usages__run_id", filter=hit & ~Q(usages__run_id=""), distinct=True),
        )
        .filter(Q(conversations__gte=used_min) | Q(runs__gte=used_min))
        .select_related("store")
        .only(*FIELDS)
        .order_by("-hits")
    )


def hit_rate(hits: int, injected: int) -> str:
    return f"{hits} of {injected} injections marked used ({100 * hits // max(injected, 1)}%)"


def usage(job: DreamJob, progress: Progress) -> dict:
    stale, earned = list(unused()), list(well_used())
    progress.total(len(stale) + len(earned))
    stats = {"unused": len(stale), "well_used": len(earned), "proposed": 0, "already_decided": 0}
    for document in stale:
        if already_decided(ReviewAction.TOMBSTONE, [document], kind=DreamKind.USAGE):
            stats["already_decided"] += 1
        else:
            stats["proposed"] += propose_review(
                job,
                document,
                constrain=False,
                rationale=(
                    f"Injected {document.injected} times in {document.conversations} "
                    f"conversation(s) since v{document.version} and never marked used: "
                    f"{hit_rate(0, document.injected)}. Demote it (lower its importance) "
                    "or rewrite it, and reject this; or approve to tombstone it."
                ),
            )
        progress.advance()
    target = consolidation_target()
    for document in earned:
        if target is not None:
            stats["proposed"] += propose(
                job,
                document,
                target_store=target,
                target_path=document.path,
                rationale=(
                    f"Marked used in {document.conversations} conversation(s) and "
                    f"{document.runs} run(s): {hit_rate(document.hits, document.injected)}; "
                    f"from {document.store.label}."
                ),
            )
        progress.advance()
    return stats
