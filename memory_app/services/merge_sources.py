"""The evidence an approved merge carries: every member's, not only the keeper's."""

from collections.abc import Collection

from memory_app.models import DreamReviewItem, MemorySourceRef, SourceKind
from memory_app.services.versions import SourceRef

MAX_REFS = 200


def merged_source_refs(item: DreamReviewItem, leaving_out: Collection = ()) -> list[SourceRef]:
    """Each merged document (by ref and version) and the source refs of its
    head, but those of the members `leaving_out` names (kept apart)."""
    members = list(
        item.related_documents.exclude(pk__in=leaving_out)
        .select_related("store")
        .only("id", "path", "version", "store__slug")
    )
    heads = {(d.pk, d.version) for d in members}
    refs = [
        SourceRef(SourceKind.DOCUMENT, f"{d.store.slug}/{d.path}@v{d.version}") for d in members
    ]
    seen = {(r.kind, r.ref) for r in refs}
    for document_id, version, kind, ref in (
        MemorySourceRef.objects.filter(version__document__in=members)
        .values_list("version__document_id", "version__version", "kind", "ref")
        .order_by("id")
    ):
        if (document_id, version) in heads and (kind, ref) not in seen:
            seen.add((kind, ref))
            refs.append(SourceRef(kind, ref))
    return refs[:MAX_REFS]
