"""Promotion: an agent's draft becomes shared, reviewed memory (DESIGN §5).

An agent proposes (a DreamJob with one DreamReviewItem); a reviewer
approves — optionally after editing — or rejects. The draft is never
changed by either decision; approval writes a new `admin_approved` version
into the target store, with lineage (`promoted_from`) to the exact draft
version that was proposed. Content is scanned under the target store's
rules when proposed and again when applied.
"""

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from pgvector.django import CosineDistance

from memory_app.access import access_store, unexpired_q
from memory_app.actors import Actor, actor_for
from memory_app.errors import InvalidInput, NotFound, PolicyDenied
from memory_app.models import (
    LIVE_STATES,
    ChangeKind,
    DocState,
    DreamKind,
    DreamReviewItem,
    MemoryDocument,
    MemoryStore,
    MemoryVersion,
    ReviewAction,
    ReviewStatus,
    Scope,
    Trust,
)
from memory_app.paths import path_error
from memory_app.policy import (
    check_can_approve,
    check_can_review,
    check_can_write,
    check_document_writable,
)
from memory_app.services.documents import (
    document_create,
    embedding_for,
    head_update,
    hold_store_for_new_document,
)
from memory_app.services.events import event_record
from memory_app.services.guard import (
    agent_text_fields,
    check_sizes,
    recording_refusals,
    scan_for_store,
    scan_note,
    scan_record,
)
from memory_app.services.merge_sources import merged_source_refs
from memory_app.services.review_items import OPEN, review_item_close, review_item_open
from memory_app.services.versions import SourceRef, version_source_refs

RELATED_LIMIT = 3
# Cosine similarity (1 - pgvector's cosine distance) from which a document
# counts as "similar memory" beside a proposal; below it a reviewer only
# sees noise.
SIMILAR_MIN = 0.5
# Everything that lands content at a target path: an agent's promotion, a
# dream's merge of near-duplicates, a contradiction superseding a document.
DECIDED_HERE = (ReviewAction.PROMOTE, ReviewAction.MERGE, ReviewAction.SUPERSEDE)


@dataclass(frozen=True)
class Proposal:
    item: DreamReviewItem
    created: bool


def _target_store(actor: Actor, name: str) -> MemoryStore:
    """A workspace or system store the actor can read (else 404)."""
    store = None
    if name not in ("user", "conversation") and (":" not in name or name.startswith("system:")):
        store = access_store(actor, name)
    if store is None or store.scope not in (Scope.WORKSPACE, Scope.SYSTEM):
        raise InvalidInput(
            "Promotions target a workspace store or 'system:<slug>'.",
            fields={"target_store": ["Name a workspace store or system:<slug>."]},
        )
    return store


def memory_propose_promotion(
    *,
    actor: Actor,
    document: MemoryDocument,
    target_store: str,
    rationale: str,
    target_path: str | None = None,
) -> Proposal:
    """Propose a conversation or user draft for a shared store.

    Permission: read access to the draft (else 404), manage memory. A
    tombstoned, superseded or expired draft cannot be proposed (403, as it
    cannot be patched); a constrained one, held for review, can. The
    content is scanned under the target store's rules (422, recorded). A
    second identical open proposal returns the first; a proposal of a newer
    version replaces the open ones of older versions for the same target.
    Emits `memory.promotion.proposed`.
    """
    check_can_write(actor)
    with recording_refusals(actor, tool="memory_propose_promotion", document_id=str(document.pk)):
        check_document_writable(document.state, document.expires_at)
    if document.store.scope not in (Scope.CONVERSATION, Scope.USER):
        raise InvalidInput(
            "Only drafts in a conversation or user store can be proposed.",
            fields={"id": ["Not a conversation or user memory."]},
        )
    store = _target_store(actor, target_store)
    path = target_path or document.path
    if error := path_error(path):
        raise InvalidInput(error, fields={"target_path": [error]})
    with recording_refusals(actor, tool="memory_propose_promotion", store=target_store):
        source_version = document.versions.get(version=document.version)
        findings = scan_for_store(
            {
                "target_path": path,
                **draft_texts(source_version, document.content),
                "rationale": rationale,
            },
            store,
        )
    # The proposal, the older ones it replaces and its event, together.
    with transaction.atomic():
        item, created = review_item_open(
            actor=actor,
            kind=DreamKind.PROMOTION,
            action=ReviewAction.PROMOTE,
            source_version=source_version,
            target_store=store,
            target_path=path,
            proposed_title=document.title,
            proposed_content=document.content,
            rationale=rationale,
            findings=[f.as_dict() for f in findings],
        )
        if not created:
            return Proposal(item, False)
        _older_proposals_replace(actor, item)
        item.related_documents.set(similar_in(store, document, path))
        event_record(
            "memory.promotion.proposed",
            actor=actor,
            document=document,
            payload={
                "review_item_id": str(item.pk),
                "dream_job_id": str(item.job_id),
                "target_store": target_store,
                "target_path": path,
            },
        )
    return Proposal(item, True)


def draft_metadata(version: MemoryVersion) -> dict:
    """The head fields a promotion carries from the proposed draft version to
    its target, so the reviewed copy ranks and reads like the draft did.

    Not `always_inject`: a pin in a shared store is a reviewer's own decision.
    """
    meta = version.metadata or {}
    expires_at = meta.get("expires_at")
    return {
        "doc_type": meta.get("doc_type", "note"),
        "recall_hint": version.recall_hint,
        "tags": list(meta.get("tags", [])),
        "entities": dict(meta.get("entities", {})),
        "importance": meta.get("importance", 5),
        "expires_at": datetime.fromisoformat(expires_at) if expires_at else None,
    }


def draft_source_refs(version: MemoryVersion) -> list[SourceRef]:
    """The evidence of the proposed draft version, carried to its target."""
    return version_source_refs(document_id=version.document_id, version=version.version)


def draft_texts(
    version: MemoryVersion, content: str, refs: list[SourceRef] | None = None
) -> dict[str, str]:
    """Every text a promotion would land in shared memory, for the scanner."""
    meta = version.metadata or {}
    return agent_text_fields(
        title=version.title,
        recall_hint=version.recall_hint,
        content=content,
        tags=meta.get("tags", []),
        entities=meta.get("entities", {}),
        source_refs=draft_source_refs(version) if refs is None else refs,
    )


def similar_in(store: MemoryStore, document: MemoryDocument, path: str) -> list[MemoryDocument]:
    """The target store's live documents closest in meaning (at least
    SIMILAR_MIN), for the reviewer; one past its expiry is not in the store
    any more, though the expiry job may not have marked it yet. The document
    at the target path is left out: the diff already shows it."""
    if document.embedding is None:
        return []
    distance = CosineDistance("embedding", document.embedding)
    return list(
        MemoryDocument.objects.filter(
            store=store,
            state=DocState.ACTIVE,
            embedding__isnull=False,
            embedding_model=document.embedding_model,
        )
        .filter(unexpired_q())
        .exclude(path=path)
        .alias(distance=distance)
        .filter(distance__lte=1 - SIMILAR_MIN)
        .order_by("distance")
        .only("id")[:RELATED_LIMIT]
    )


def _open_item(item_id, *, lock: bool = True) -> DreamReviewItem:
    items = DreamReviewItem.objects.select_related("job", "target_store", "source_version")
    if lock:
        items = items.select_for_update(of=("self",))
    item = items.filter(pk=item_id, action__in=DECIDED_HERE, status__in=OPEN).first()
    if item is None:
        raise NotFound("No open review item with that id.")
    return item


def promotion_approve(
    *,
    user: AbstractBaseUser,
    item_id,
    note: str = "",
    content: str | None = None,
    keep_apart: Collection = (),
) -> MemoryDocument:
    """Apply a proposal: the (possibly edited) content lands in the target store.

    Permission: "review promotions", humans only. An agent's proposal whose
    draft is no longer live is refused (403), and so is an edit that leaves
    nothing but whitespace (400): no other write publishes a blank memory.
    Re-scans what is applied, and the note, which becomes the version's
    reason (422, recorded).
    Writes a `promote` version with `admin_approved` trust, superseding what
    the target path held; the draft is untouched. A merge's members step
    aside for it, except those in `keep_apart` (ids): a member the reviewer
    found to say something else stays as it is, and its evidence is not the
    merged version's. Emits `memory.promotion.approved`.
    """
    check_can_approve(user)
    item = _open_item(item_id, lock=False)
    if item.target_store.scope not in (Scope.WORKSPACE, Scope.SYSTEM):
        raise InvalidInput(
            "Approved memory lives in workspace and system stores only; "
            "reject this proposal, whose target is a private store."
        )
    keep_apart = _members_kept_apart(item, keep_apart)
    # The queue's card sends its edit box with every approval: the proposal
    # sent back unchanged is no edit, so a merge is still built again
    # without the members kept apart.
    if content is not None and _lf(content) == _lf(item.proposed_content):
        content = None
    final = item.proposed_content if content is None else content
    if content is None and keep_apart:
        final = _merged_without(item, keep_apart)
    check_sizes(content=final)
    if not final.strip():
        message = "An approved memory needs some content; reject the proposal instead."
        raise InvalidInput(message, fields={"content": [message]})
    store = item.target_store
    draft = item.source_version
    refs = draft_source_refs(draft)
    with recording_refusals(actor_for(user), tool="promotion_approve", store=store.slug):
        findings = scan_for_store(
            {**draft_texts(draft, final, refs), "title": item.proposed_title, "note": note},
            store,
        )
    fields = {
        **draft_metadata(draft),
        "title": item.proposed_title,
        "content": final,
        "trust": Trust.ADMIN_APPROVED,
        "state": DocState.ACTIVE,
        "promoted_from": draft,
    }
    embedding = embedding_for(fields["title"], fields["recall_hint"], final)
    version_kwargs = {
        "reason": note or item.rationale,
        "source_refs": refs,
        **scan_record(findings),
    }
    with transaction.atomic():
        # Decided by someone else meanwhile: NotFound. Proposals never change.
        item = _open_item(item_id)
        _lock_involved(item)
        target = _apply(item, user, fields, embedding, version_kwargs, note, keep_apart)
        event_record(
            "memory.promotion.approved",
            principal=user,
            document=target,
            payload={
                "review_item_id": str(item.pk),
                "target_store": store.slug,
                "target_path": item.target_path,
                "version": target.version,
                "edited": content is not None and content != item.proposed_content,
                "kept_apart": sorted(str(pk) for pk in keep_apart),
            },
        )
    return target


def _lf(text: str) -> str:
    """Line breaks as LF: a text box sends CRLF, the API keeps what it got."""
    return text.replace("\r\n", "\n")


def _older_proposals_replace(actor: Actor, item: DreamReviewItem) -> None:
    """Close the open proposals of the draft's earlier versions for the same
    target: proposing a draft again after editing it means the newer text,
    and an older proposal left open could be approved over it (a bulk
    approval would land both, the older last). Each closes as rejected,
    with a note and the event a rejection emits, naming what replaced it."""
    note = f"Replaced by the proposal of version {item.source_version.version} of the draft."
    with transaction.atomic():
        older = (
            DreamReviewItem.objects.select_for_update(of=("self",))
            .filter(
                action=ReviewAction.PROMOTE,
                source_document_id=item.source_document_id,
                target_store=item.target_store_id,
                target_path=item.target_path,
                status__in=OPEN,
                source_version__version__lt=item.source_version.version,
            )
            .select_related("job", "source_document")
        )
        for stale in older:
            review_item_close(stale, user=actor.agent, status=ReviewStatus.REJECTED, note=note)
            event_record(
                "memory.promotion.rejected",
                actor=actor,
                document=stale.source_document,
                payload={
                    "review_item_id": str(stale.pk),
                    "note": note,
                    "replaced_by": str(item.pk),
                },
            )


def _lock_involved(item: DreamReviewItem) -> None:
    """Lock every document the approval touches (the draft, what the target
    path holds, a merge's members) in one statement, in id order, as a
    redaction locks a lineage: the two then wait for each other instead of
    deadlocking. Refuse an agent's proposal whose draft was deleted (a human
    confirmed it) or superseded after it was proposed: approving would land
    text that is gone into shared memory."""
    involved = Q(store=item.target_store_id, path=item.target_path)
    if item.source_document_id is not None:
        involved |= Q(pk=item.source_document_id)
    if item.action == ReviewAction.MERGE:
        involved |= Q(pk__in=item.related_documents.values("pk"))
    states = {
        pk: (state, expires_at)
        for pk, state, expires_at in MemoryDocument.objects.select_for_update(of=("self",))
        .filter(involved)
        .order_by("pk")
        .values_list("pk", "state", "expires_at")
    }
    if item.action != ReviewAction.PROMOTE or item.source_version is None:
        return
    state, expires_at = states.get(item.source_version.document_id, (None, None))
    if state not in LIVE_STATES:
        raise PolicyDenied(
            f"The proposed memory was {state} after it was proposed; reject the proposal.",
            reason="document_not_active",
        )
    if expires_at is not None and expires_at <= timezone.now():
        raise PolicyDenied(
            "The proposed memory expired after it was proposed; reject the proposal.",
            reason="document_not_active",
        )


def _members_kept_apart(item: DreamReviewItem, ids: Collection) -> frozenset:
    """`ids` as documents of the merge `item` that are not its target: 400
    for any other (a wrong id would otherwise be ignored in silence)."""
    if not ids:
        return frozenset()
    members = set()
    if item.action == ReviewAction.MERGE:
        members = set(
            item.related_documents.exclude(
                store=item.target_store, path=item.target_path
            ).values_list("pk", flat=True)
        )
    strays = [str(pk) for pk in ids if pk not in members]
    if strays:
        raise InvalidInput(
            "Only the other members of a merge may be kept apart.",
            fields={"keep_apart": [f"Not one of them: {', '.join(strays)}."]},
        )
    return frozenset(ids)


def _merged_without(item: DreamReviewItem, keep_apart: frozenset) -> str:
    """A merge's text built again without the members kept apart: a member
    that says something else is not part of the merge, its words included
    (the proposed text held every member's). Built from each member's text
    as it was when the merge was proposed, as the reviewer saw it: an edit
    of a member since is not approved unseen."""
    # Compaction builds merge texts; it imports this module for its proposals.
    from memory_app.dreams.compact import merged_content

    members = item.related_documents.exclude(pk=item.source_document_id).exclude(pk__in=keep_apart)
    then = {
        version.document_id: version
        for version in MemoryVersion.objects.filter(
            document__in=members, created_at__lte=item.created_at
        )
        .order_by("document_id", "-version")
        .distinct("document_id")
        .only("document_id", "content")
    }
    others = [then[pk] for pk in members.order_by("created_at").values_list("pk", flat=True)]
    return merged_content(item.source_version, others)


def _apply(
    item, user, fields, embedding, version_kwargs, note: str, keep_apart: frozenset
) -> MemoryDocument:
    """Write the approved content to the target path and close the item."""
    store = item.target_store
    if item.action == ReviewAction.MERGE:
        refs = merged_source_refs(item, leaving_out=keep_apart)
        version_kwargs = {**version_kwargs, "source_refs": refs}
    hold_store_for_new_document(store)
    target = (
        MemoryDocument.objects.select_for_update()
        .filter(store=store, path=item.target_path)
        .first()
    )
    if target is None:
        target = document_create(
            store=store,
            path=item.target_path,
            author=user,
            change=ChangeKind.PROMOTE,
            embedding=embedding,
            **{k: v for k, v in fields.items() if k != "state"},
            **version_kwargs,
        )
    else:
        head_update(
            target,
            change=ChangeKind.PROMOTE,
            author=user,
            fields=fields,
            embedding=embedding,
            **version_kwargs,
        )
    if item.action == ReviewAction.MERGE:
        _supersede_merged(item, target, user, keep_apart)
    item.result_version = target.versions.get(version=target.version)
    review_item_close(item, user=user, status=ReviewStatus.APPROVED, note=note)
    return target


def _supersede_merged(
    item: DreamReviewItem, target: MemoryDocument, user, keep_apart: frozenset
) -> None:
    """The cluster's other documents step aside for the merged one, history
    kept; those the reviewer kept apart stay as they are."""
    for source in (
        item.related_documents.select_for_update()
        .exclude(pk=target.pk)
        .exclude(pk__in=keep_apart)
        .filter(state__in=(DocState.ACTIVE, DocState.CONSTRAINED))
    ):
        head_update(
            source,
            change=ChangeKind.SUPERSEDE,
            author=user,
            fields={"state": DocState.SUPERSEDED},
            reason=f"Merged into {target.path}.",
        )


def promotion_defer(*, user: AbstractBaseUser, item_id, note: str = "") -> DreamReviewItem:
    """Set a proposal aside; it stays open and leaves the pending queue.

    Permission: "review promotions", humans only. The note is scanned (422,
    recorded).
    """
    check_can_review(user)
    scan_note(
        user, note, tool="promotion_defer", store=_open_item(item_id, lock=False).target_store
    )
    with transaction.atomic():
        item = _open_item(item_id)
        item.status, item.decision_note = ReviewStatus.DEFERRED, note
        item.save(update_fields=["status", "decision_note"])
    return item


def promotion_reject(*, user: AbstractBaseUser, item_id, note: str) -> DreamReviewItem:
    """Decline a proposal with a note; the draft stays as it is.

    Permission: "review promotions", humans only. The note is scanned (422,
    recorded); a clean one is repeated in the `memory.promotion.rejected`
    event this emits.
    """
    check_can_review(user)
    scan_note(
        user, note, tool="promotion_reject", store=_open_item(item_id, lock=False).target_store
    )
    with transaction.atomic():
        item = _open_item(item_id)
        review_item_close(item, user=user, status=ReviewStatus.REJECTED, note=note)
        event_record(
            "memory.promotion.rejected",
            principal=user,
            document=item.source_document,
            payload={"review_item_id": str(item.pk), "note": note},
        )
    return item
