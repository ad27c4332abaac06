"""Compaction: documents that say the same thing become merge proposals.

Within one store, two active documents say the same thing when their
embeddings are close (cosine ≥ PARAPHRASE_MIN, tuned on the labelled pairs
of benchmarks/eval/paraphrases.py; docs/dreams.md has the figures) and they
state no conflicting figures (that is a contradiction, not a paraphrase).
This is looser than the write-time duplicate gates on purpose: three
runs describing one fix in their own words share meaning, not words.
Every member of a cluster is close to the cluster's seed, so a chain of
each-a-bit-different notes cannot snowball into one cluster.

Each cluster becomes one merge proposal onto its keeper — the most
trusted, then most used, then oldest document. The proposed text is
extractive: the keeper's text, then every unit (line or sentence) of the
others that adds a step, command or fact, so a reviewer edits rather than
reconstructs. Approving supersedes the others; the merged version carries
every member's source refs. The members are `constrained` while the item is
open, and a cluster a reviewer decided is not proposed again unless one of
its documents changed since.
"""

import re
from collections import defaultdict

from django.conf import settings
from django.db import transaction
from pgvector.django import CosineDistance

from memory_app.dreams.claims import conflicting_figures
from memory_app.dreams.decisions import already_decided
from memory_app.dreams.progress import Progress
from memory_app.dreams.proposals import propose
from memory_app.models import (
    TRUST_WEIGHT,
    DocState,
    DreamJob,
    MemoryDocument,
    MemorySourceRef,
    ReviewAction,
    Scope,
)
from memory_app.selectors.search import set_vector_search_options

PARAPHRASE_MIN = 0.73
UNIT_NEW_WORDS_MIN = 0.3
NEIGHBOURS = 8
FIELDS = (
    "id",
    "store_id",
    "path",
    "title",
    "content",
    "trust",
    "hit_count",
    "version",
    "created_at",
)

_WORD = re.compile(r"[a-z0-9][a-z0-9'-]*")
_STOPWORDS = frozenset(
    {
        "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "have", "if",
        "in", "is", "it", "its", "of", "on", "or", "so", "that", "the", "then", "this", "to",
        "was", "were", "when", "with",
    }
)  # fmt: skip
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_COMMAND = re.compile(r"`[^`]+`|^\s*\$\s+\S.*$", re.M)
_FACT = re.compile(
    r"\d+(?:[.,:]\d+)*|[\w-]+(?:[./][\w-]+)+|\b[a-z0-9]+(?:_[a-z0-9]+)+\b|--[\w-]+", re.I
)


def same_claim(a: str, b: str) -> bool:
    """Not a contradiction: a changed figure is for the contradictions job."""
    return not conflicting_figures(a, b)


def _neighbours(document: MemoryDocument) -> list[MemoryDocument]:
    with transaction.atomic():
        set_vector_search_options()
        return list(
            MemoryDocument.objects.filter(
                store_id=document.store_id,
                state=DocState.ACTIVE,
                embedding__isnull=False,
                embedding_model=document.embedding_model,
            )
            .exclude(pk=document.pk)
            .annotate(distance=CosineDistance("embedding", document.embedding))
            .order_by("distance")
            .only(*FIELDS)[:NEIGHBOURS]
        )


def clusters(documents: list[MemoryDocument], progress: Progress) -> list[list[MemoryDocument]]:
    """Groups of documents saying the same thing, each around a seed.

    In creation order, each document not yet grouped is a seed; its nearest
    neighbours not yet grouped join it when they are close enough to the
    seed itself and state no conflicting figures. Every member is close to
    its seed, so no chain of each-a-bit-different notes forms one group,
    and a group has at most NEIGHBOURS + 1 members.
    """
    by_id = {d.pk: d for d in documents}
    grouped: set = set()
    found = []
    for seed in documents:
        progress.advance()
        if seed.pk in grouped:
            continue
        members = [seed]
        for other in _neighbours(seed):
            if 1 - other.distance < PARAPHRASE_MIN:
                break
            if (
                other.pk in by_id
                and other.pk not in grouped
                and same_claim(seed.content, other.content)
            ):
                members.append(by_id[other.pk])
        if len(members) > 1:
            grouped |= {m.pk for m in members}
            found.append(members)
    return found


def keeper(cluster: list[MemoryDocument]) -> MemoryDocument:
    return min(
        cluster,
        key=lambda d: (-TRUST_WEIGHT.get(d.trust, 0.0), -d.hit_count, d.created_at),
    )


def _units(text: str) -> list[str]:
    """Lines; a prose line longer than one sentence is split into sentences."""
    units = []
    for line in text.splitlines():
        if not line.strip():
            continue
        if _COMMAND.search(line) or line.lstrip().startswith(("-", "*", "#")):
            units.append(line.rstrip())
        else:
            units += [s.strip() for s in _SENTENCE_END.split(line) if s.strip()]
    return units


def _adds(unit: str, text_so_far: str) -> bool:
    """The unit holds a command or a fact (figure, dotted or slashed name, flag) not yet there."""
    return any(c.strip().lower() not in text_so_far for c in _COMMAND.findall(unit)) or any(
        f.lower() not in text_so_far for f in _FACT.findall(unit)
    )


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOPWORDS}


def merged_content(main: MemoryDocument, others: list[MemoryDocument]) -> str:
    """The keeper's text, then each unit of the others that adds something.

    A unit adds something when it holds a command or a fact the text so far
    lacks, or when at least UNIT_NEW_WORDS_MIN of its words are new. Only a
    restatement in the same words is dropped; one in other words stays for
    the reviewer to cut, so nothing distinct is ever lost. Plain text work:
    the merge needs no model, and compaction stays cheap in time and memory.
    """
    words = _words(main.content)
    text_so_far = main.content.lower()
    room = settings.MEMORY_MAX_CONTENT_CHARS - len(main.content)
    extra: list[str] = []
    for other in others:
        for unit in _units(other.content):
            unit_words = _words(unit)
            novel = len(unit_words - words) / max(len(unit_words), 1)
            adds = _adds(unit, text_so_far) or novel >= UNIT_NEW_WORDS_MIN
            if adds and len(unit) + 1 <= room:
                room -= len(unit) + 1
                extra.append(unit)
                words |= unit_words
                text_so_far += "\n" + unit.lower()
    return main.content if not extra else main.content.rstrip() + "\n" + "\n".join(extra)


def compact(job: DreamJob, progress: Progress) -> dict:
    """Store by store, so memory holds one store's documents at a time.

    Shared stores only: an approved merge is reviewed memory, which a
    conversation store (scratch, rotated) and a user store (its owner's)
    never hold; their drafts reach shared memory through promotion.
    """
    candidates = MemoryDocument.objects.filter(
        store__scope__in=(Scope.WORKSPACE, Scope.SYSTEM),
        state=DocState.ACTIVE,
        embedding__isnull=False,
    )
    store_ids = list(candidates.values_list("store_id", flat=True).distinct().order_by())
    progress.total(candidates.count())
    stats = {"documents": 0, "clusters": 0, "proposed": 0, "already_decided": 0}
    for store_id in store_ids:
        documents = list(
            candidates.filter(store_id=store_id)
            .select_related("store")
            .only(*FIELDS, "embedding", "embedding_model", "store__slug")
            .order_by("created_at")
        )
        found = clusters(documents, progress)
        stats["documents"] += len(documents)
        stats["clusters"] += len(found)
        for cluster in found:
            if already_decided(ReviewAction.MERGE, cluster):
                stats["already_decided"] += 1
            else:
                stats["proposed"] += _propose_merge(job, cluster)
    return stats


def _sources(cluster: list[MemoryDocument]) -> str:
    """Each member and the evidence behind its head version, for the reviewer."""
    refs = defaultdict(list)
    for ref in MemorySourceRef.objects.filter(version__document__in=cluster).values_list(
        "version__document_id", "version__version", "kind", "ref"
    ):
        refs[ref[0], ref[1]].append(f"{ref[2]}:{ref[3]}")
    lines = []
    for d in cluster:
        evidence = ", ".join(refs.get((d.pk, d.version), [])) or "no source refs"
        lines.append(f"- {d.path} v{d.version} ({evidence})")
    return "\n".join(lines)


def _propose_merge(job: DreamJob, cluster: list[MemoryDocument]) -> bool:
    main = keeper(cluster)
    others = [d for d in cluster if d.pk != main.pk]
    return propose(
        job,
        main,
        action=ReviewAction.MERGE,
        target_store=main.store,
        target_path=main.path,
        content=merged_content(main, others),
        rationale=(
            f"{len(others)} other document(s) in {main.store.label} say the same thing. "
            f"Sources:\n{_sources(cluster)}"
        ),
        related=cluster,
        constrain=cluster,
    )
