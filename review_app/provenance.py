"""What a reviewer needs to trust a memory: its metadata, its evidence and
who wrote and approved it, for the one metadata block the queue cards and
the document page share (`review_app/_metadata.html`).

Everything here is agent-supplied text, escaped by the template. Only a
`url` source ref with an http(s) address becomes a link; anything else
(`javascript:`, `data:`, a relative path) is shown as text.
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from urllib.parse import urlsplit

from django.db.models import Exists, IntegerField, OuterRef, Prefetch
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast
from django.utils.dateparse import parse_datetime

from memory_app.models import (
    ChangeKind,
    DreamReviewItem,
    MemoryDocument,
    MemoryEvent,
    MemorySourceRef,
    MemoryVersion,
    SourceKind,
)

LINK_SCHEMES = ("http", "https")
# A well-formed URL has none of these; a ref with them is shown, not linked.
NOT_IN_URLS = re.compile(r"[\s\"'<>`\\]")


@dataclass(frozen=True)
class Ref:
    kind: str
    ref: str

    @property
    def href(self) -> str:
        """The ref as a link target, or "" when it must stay text."""
        url = self.ref.strip()
        if self.kind != SourceKind.URL or NOT_IN_URLS.search(url):
            return ""
        try:
            parts = urlsplit(url)
        except ValueError:
            return ""
        return url if parts.scheme in LINK_SCHEMES and parts.netloc else ""


@dataclass
class Provenance:
    doc_type: str
    importance: int | None
    recall_hint: str
    expires_at: datetime | None
    tags: list[str] = field(default_factory=list)
    entities: list[tuple[str, str]] = field(default_factory=list)
    refs: list[Ref] = field(default_factory=list)
    written_by: str = ""
    approved_by: str = ""


def _entities(entities: dict) -> list[tuple[str, str]]:
    return [(name, str(value)) for name, value in sorted((entities or {}).items()) if value]


def _expiry(value) -> datetime | None:
    return parse_datetime(value) if isinstance(value, str) else value


def refs_prefetch() -> Prefetch:
    """A version's source refs, in order, as `version.refs`."""
    return Prefetch("source_refs", queryset=MemorySourceRef.objects.order_by("id"), to_attr="refs")


def version_refs(versions: Iterable[MemoryVersion]) -> dict[int, list[Ref]]:
    """The source refs of many versions, in one query, by version id."""
    refs: dict[int, list[Ref]] = {}
    ids = [v.pk for v in versions if v is not None]
    for version_id, kind, ref in (
        MemorySourceRef.objects.filter(version_id__in=ids)
        .order_by("id")
        .values_list("version_id", "kind", "ref")
    ):
        refs.setdefault(version_id, []).append(Ref(kind, ref))
    return refs


def of_version(version: MemoryVersion, refs: list[Ref], approved_by: str = "") -> Provenance:
    """A version as proposed or written: the snapshot kept with it."""
    meta = version.metadata or {}
    return Provenance(
        doc_type=meta.get("doc_type", ""),
        importance=meta.get("importance"),
        recall_hint=version.recall_hint,
        expires_at=_expiry(meta.get("expires_at")),
        tags=list(meta.get("tags", [])),
        entities=_entities(meta.get("entities", {})),
        refs=refs,
        written_by=version.author_name,
        approved_by=approved_by,
    )


def of_document(
    document: MemoryDocument, head: MemoryVersion, authors: dict[int, tuple[str, str]]
) -> Provenance:
    """The document's head, with the head version's evidence and authors."""
    written_by, approved_by = authors.get(head.pk, (head.author_name, ""))
    return Provenance(
        doc_type=document.doc_type,
        importance=document.importance,
        recall_hint=document.recall_hint,
        expires_at=document.expires_at,
        tags=list(document.tags),
        entities=_entities(document.entities),
        refs=version_refs([head]).get(head.pk, []),
        written_by=written_by,
        approved_by=approved_by,
    )


def version_authors(versions: list[MemoryVersion]) -> dict[int, tuple[str, str]]:
    """(written by, approved by) of each version, by version id, in one query.

    A promotion's version is the approving reviewer's; the text is the
    agent's who wrote the proposed draft, unless the reviewer edited it
    before approving, which the approval then says.
    """
    authors = {v.pk: (v.author_name, "") for v in versions}
    promoted = [v.pk for v in versions if v.change == ChangeKind.PROMOTE]
    # The approval's own record says whether the reviewer edited the text:
    # comparing the texts would also count a redaction of the draft since.
    edited_approval = (
        MemoryEvent.objects.filter(
            type="memory.promotion.approved",
            document_id=OuterRef("result_version__document_id"),
            payload__edited=True,
        )
        .annotate(version=Cast(KeyTextTransform("version", "payload"), IntegerField()))
        .filter(version=OuterRef("result_version__version"))
    )
    for result_id, draft_author, proposer, edited in (
        DreamReviewItem.objects.filter(result_version_id__in=promoted)
        .annotate(edited=Exists(edited_approval))
        .values_list(
            "result_version_id", "source_version__author_name", "proposed_by__username", "edited"
        )
    ):
        reviewer = authors[result_id][0]
        approval = f"{reviewer}, with edits" if edited else reviewer
        authors[result_id] = (draft_author or proposer or "a dream job", approval)
    return authors
