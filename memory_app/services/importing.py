"""Import: reading back what services/export.py writes.

All or nothing: the import runs in one transaction, and any malformed line
or history that does not verify (a chain hash that does not recompute, a
head that is not its last version), a document id or a store and path
that the file repeats, or a text the safety scanner refuses aborts it
with the line numbers at fault. Each line is held to its model in
services/export_format.py, which takes the API's rules for the fields the
API takes too, and to the characters the API refuses anywhere
(api/validation.py). A file of format version 2 ends with a line counting
its stores and documents; without it the file was cut short. Messages
name lines and fields, never quote them. Lines are read and checked by
services/import_lines.py, histories verified by import_history.py, texts
scanned by import_scan.py; this module writes what they let through.

Every text is scanned as the write path scans it, under the rules of the
store it goes into (DESIGN §3: no write skips the scanner): the head,
each version's texts and reason, the review decisions' texts. Versions
are stamped with this scan, not with the verdict the file carries, so
the rescan job sees them as any other write's.

Conflict modes, for a document whose id — or store and path — is already
here:

- skip (default): keep what is here;
- overwrite: the imported head becomes a new version of the document here
  (history is append-only, so nothing here is lost);
- new-ids: import every document under a fresh id (paths taken here are
  reported as conflicts and skipped).

Review decisions come with the documents this import creates; a skipped
or overwritten document keeps the decisions already here. A store (and
the people it names) is created only with a document created in it.

`store_map` renames stores on the way in ({"workspace_a": "workspace_b"}).
Authors missing here are created as inactive accounts, so history keeps
its names; embeddings are left for the embed job.
"""

import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.db import DatabaseError, IntegrityError, transaction
from django.db.models import Q
from django.utils.dateparse import parse_datetime

from memory_app.access import store_named_q
from memory_app.errors import InvalidInput
from memory_app.models import (
    ChangeKind,
    Conversation,
    DreamJob,
    DreamReviewItem,
    JobStatus,
    MemoryDocument,
    MemorySourceRef,
    MemoryStore,
    MemoryVersion,
    Scope,
    System,
    Trust,
)
from memory_app.services.chain import chain_resign
from memory_app.services.documents import head_update
from memory_app.services.export_format import store_ref_problem
from memory_app.services.guard import scan_record
from memory_app.services.import_history import signed_without_records
from memory_app.services.import_lines import Refused, checked_lines
from memory_app.services.import_scan import (
    REVIEW_TEXTS,
    ImportScanner,
    Scanned,
    head_texts,
    refuse_blocked,
    version_texts,
)
from memory_app.services.stores import (
    store_for_conversation,
    store_for_system,
    store_for_user,
    store_workspace_ensure,
)

MODES = ("skip", "overwrite", "new-ids")
HEAD_FIELDS = (
    "title",
    "recall_hint",
    "content",
    "doc_type",
    "trust",
    "state",
    "always_inject",
    "tags",
    "entities",
    "importance",
)
JOB_STATUS = {
    "pending": JobStatus.AWAITING_REVIEW,
    "deferred": JobStatus.AWAITING_REVIEW,
    "approved": JobStatus.SUCCEEDED,
    "rejected": JobStatus.REJECTED,
}
# Only promotions (into workspace and system stores), seeding and a
# reviewer's page edits in a workspace store set these (promote.py,
# seed.py, authoring._trust): the stores of a user or a conversation hold
# agent drafts and their people's own edits.
REVIEWED_TRUST = (Trust.ADMIN_APPROVED, Trust.SYSTEM_SEEDED)
PRIVATE_SCOPES = (Scope.USER, Scope.CONVERSATION)


@dataclass
class ImportReport:
    created: int = 0
    skipped: int = 0
    overwritten: int = 0
    conflicts: list[str] = field(default_factory=list)
    reviews: int = 0


class _Importer:
    def __init__(self, mode: str, store_map: dict[str, str]) -> None:
        if mode not in MODES:
            raise InvalidInput(f"mode must be one of {', '.join(MODES)}")
        for source, target in store_map.items():
            if problem := store_ref_problem(target):
                raise InvalidInput(f"Cannot import {source} as {target}: {problem}.")
        self.mode, self.store_map = mode, store_map
        self.report = ImportReport()
        self.users: dict[str, object] = {}
        self.store_lines: dict[str, dict] = {}
        self.named: set[str] = set()  # the store names the file uses
        self.stores: dict[str, MemoryStore] = {}
        self.ids: dict[str, uuid.UUID] = {}  # exported document id -> id here
        self.pending_links: list[tuple[uuid.UUID, list]] = []
        self.pending_reviews: list[tuple[dict, list[dict]]] = []
        self.scanner = ImportScanner()
        # Where the file first named each document id, and each store and path.
        self.lines_by_id: dict[str, int] = {}
        self.lines_by_path: dict[tuple[str, str], int] = {}

    # People and stores -------------------------------------------------

    def user(self, name: str | None):
        if not name:
            return None
        if name not in self.users:
            user, created = get_user_model().objects.get_or_create(
                username=name, defaults={"is_active": False}
            )
            if created:
                user.set_unusable_password()
                user.save(update_fields=["password"])
            self.users[name] = user
        return self.users[name]

    def ref(self, exported_ref: str) -> str:
        """The name a store of the file takes here."""
        return self.store_map.get(exported_ref, exported_ref)

    def store_here(self, exported_ref: str) -> MemoryStore | None:
        """The store the file's store is imported as, if it is here already."""
        ref = self.ref(exported_ref)
        if ref in self.stores:
            return self.stores[ref]
        return MemoryStore.objects.filter(
            store_named_q(ref) or Q(slug=ref, scope=Scope.WORKSPACE)
        ).first()

    def store(self, exported_ref: str) -> MemoryStore:
        """The store the file's store is imported as, created (with the people
        it names) if need be."""
        ref = self.ref(exported_ref)
        if ref in self.stores:
            return self.stores[ref]
        line = self.store_lines.get(exported_ref, {})
        kind, _, rest = ref.partition(":")
        if kind == "system" and rest:
            system, _ = System.objects.get_or_create(slug=rest, defaults={"name": rest})
            store = store_for_system(system=system)
        elif kind == "user" and rest:
            store = store_for_user(user=self.user(rest))
        elif kind == "conversation" and rest:
            participants = [self.user(name) for name in line.get("participants", [])]
            conversation, _ = Conversation.objects.get_or_create(
                external_id=rest, defaults={"created_by": participants[0] if participants else None}
            )
            conversation.participants.add(*participants)
            store = store_for_conversation(conversation=conversation)
        else:
            taken = MemoryStore.objects.filter(slug=ref).exclude(scope=Scope.WORKSPACE).first()
            if taken is not None:
                raise Refused(f"{ref} is the slug of a {taken.scope} store here, not a workspace")
            store = store_workspace_ensure(
                slug=ref, name=line.get("name") or ref, description=line.get("description", "")
            )
        self.stores[ref] = store
        return store

    # Documents ---------------------------------------------------------

    def document(self, number: int, line: dict) -> None:
        """Create, overwrite or skip one document; a created one brings its reviews."""
        self._check_repeats(number, line)
        self.named.add(line["store"])
        self.named.update(r["target_store"] for r in line["reviews"] if r["target_store"])
        scanned = self._scan(line)
        exported_id = line["id"]
        here = MemoryDocument.objects.filter(pk=exported_id).first()
        if here is None or self.mode == "new-ids":
            at_path = self._at_path(line)
            if at_path is None:
                store = self.store(line["store"])
                _check_trust(line, store)
                new_id = exported_id if self.mode != "new-ids" else uuid.uuid4()
                self._create(line, store, new_id, scanned.versions)
                self.pending_reviews.extend(zip(line["reviews"], scanned.reviews, strict=True))
                return
            here = at_path if self.mode == "overwrite" else None
            if here is None:
                self.report.conflicts.append(f"{at_path.store.slug}/{line['path']}")
                return
        self.ids[exported_id] = here.pk
        if self.mode == "overwrite":
            self._overwrite(here, line)
        else:
            self.report.skipped += 1

    def _at_path(self, line: dict) -> MemoryDocument | None:
        """The document at the line's path here, if its store is here at all."""
        store = self.store_here(line["store"])
        if store is None:
            return None
        documents = MemoryDocument.objects.select_related("store")
        return documents.filter(store=store, path=line["path"]).first()

    def _check_repeats(self, number: int, line: dict) -> None:
        """Refuse a document id, or a store and path, an earlier line holds:
        one of the two would silently be lost, or overwrite the other."""
        exported_id, where = str(uuid.UUID(line["id"])), (self.ref(line["store"]), line["path"])
        if (first := self.lines_by_id.get(exported_id)) is not None:
            raise Refused(f"id: the document of line {first} has this id too")
        if (first := self.lines_by_path.get(where)) is not None:
            raise Refused(
                f"store, path: the document of line {first} is at this path of {where[0]} too"
            )
        self.lines_by_id[exported_id] = self.lines_by_path[where] = number

    def _scan(self, line: dict) -> Scanned:
        """Scan every text of the line under the rules of the store it goes
        into (a review decision's: its target store's); Refused on a block."""
        conversation = self.ref(line["store"]).startswith("conversation:")
        scan = self.scanner.findings
        head = head_texts(line)
        texts = [version_texts(line, v) | {"reason": v["reason"]} for v in line["versions"]]
        self.scanner.prepare(
            [*head.values(), *(text for fields in texts for text in fields.values())],
            conversation=conversation,
        )
        found = [("", f) for f in scan(head, conversation=conversation)]
        versions = [scan(fields, conversation=conversation) for fields in texts]
        for index, findings in enumerate(versions):
            found += [(f"versions.{index}.", f) for f in findings]
        reviews = []
        for index, review in enumerate(line["reviews"]):
            target = self.ref(review["target_store"] or "")
            review_texts = {name: review[name] for name in REVIEW_TEXTS}
            findings = scan(review_texts, conversation=target.startswith("conversation:"))
            found += [(f"reviews.{index}.", f) for f in findings]
            reviews.append([f.as_dict() for f in findings])
        refuse_blocked(found)
        # A reason is scanned apart from the version's texts when it is written.
        records = [scan_record([f for f in v if f.field != "reason"]) for v in versions]
        return Scanned(records, reviews)

    def _create(self, line: dict, store: MemoryStore, new_id, scanned: list[dict]) -> None:
        document = MemoryDocument.objects.create(
            id=new_id,
            store=store,
            path=line["path"],
            content_sha256=line["content_sha256"],
            version=line["version"],
            hit_count=line["hit_count"],
            last_used_at=parse_datetime(line["last_used_at"] or "") or None,
            expires_at=parse_datetime(line["expires_at"] or "") or None,
            created_by=self.user(line["created_by"]),
            **{name: line[name] for name in HEAD_FIELDS},
        )
        MemoryDocument.objects.filter(pk=document.pk).update(
            created_at=parse_datetime(line["created_at"]),
            updated_at=parse_datetime(line["updated_at"]),
        )
        versions = MemoryVersion.objects.bulk_create(
            MemoryVersion(
                document=document,
                author=self.user(v["author"]),
                on_behalf_of=self.user(v["on_behalf_of"]),
                created_at=parse_datetime(v["created_at"]),
                **record,
                **{
                    k: v[k]
                    for k in (
                        "version",
                        "change",
                        "title",
                        "recall_hint",
                        "content",
                        "sha256",
                        "parent_sha256",
                        "chain_sha256",
                        "chain_key_id",
                        "metadata",
                        "author_name",
                        "run_id",
                        "reason",
                    )
                },
            )
            for v, record in zip(line["versions"], scanned, strict=True)
        )
        MemorySourceRef.objects.bulk_create(
            MemorySourceRef(version=version, kind=kind, ref=ref)
            for version, v in zip(versions, line["versions"], strict=True)
            for kind, ref in v["source_refs"]
        )
        if signed_without_records(line):
            chain_resign(document)
        self.ids[line["id"]] = document.pk
        if line["promoted_from"]:
            self.pending_links.append((document.pk, line["promoted_from"]))
        self.report.created += 1

    def _overwrite(self, here: MemoryDocument, line: dict) -> None:
        locked = MemoryDocument.objects.select_for_update().select_related("store").get(pk=here.pk)
        _check_trust(line, locked.store)
        # Scanned again under the rules of the store it is in here.
        findings = self.scanner.findings(
            head_texts(line), conversation=locked.store.scope == Scope.CONVERSATION
        )
        refuse_blocked(("", f) for f in findings)
        changed = head_update(
            locked,
            change=ChangeKind.UPDATE,
            author=None,
            fields={name: line[name] for name in HEAD_FIELDS},
            reason=f"Imported (version {line['version']} of the export).",
            **scan_record(findings),
        )
        self.report.overwritten += changed
        self.report.skipped += not changed

    # Links and review decisions, once every document is here -------------

    def version(self, ref: list | None) -> MemoryVersion | None:
        if not ref:
            return None
        document_id = self.ids.get(ref[0], ref[0])
        return MemoryVersion.objects.filter(document_id=document_id, version=ref[1]).first()

    def finish(self) -> None:
        for document_id, ref in self.pending_links:
            MemoryDocument.objects.filter(pk=document_id).update(promoted_from=self.version(ref))
        for review, findings in self.pending_reviews:
            self._review(review, findings)

    def _review(self, review: dict, findings: list[dict]) -> None:
        item_id = review["id"] if self.mode != "new-ids" else uuid.uuid4()
        if DreamReviewItem.objects.filter(pk=item_id).exists():
            return
        source = self.version(review["source_version"])
        job = DreamJob.objects.create(kind=review["job_kind"], status=JOB_STATUS[review["status"]])
        item = DreamReviewItem(
            id=item_id,
            job=job,
            action=review["action"],
            status=review["status"],
            source_document_id=source.document_id if source else None,
            source_version=source,
            target_store=self.store(review["target_store"]) if review["target_store"] else None,
            target_path=review["target_path"],
            proposed_title=review["proposed_title"],
            proposed_content=review["proposed_content"],
            rationale=review["rationale"],
            findings=findings,
            proposed_by=self.user(review["proposed_by"]),
            run_id=review["run_id"],
            decided_by=self.user(review["decided_by"]),
            decided_at=parse_datetime(review["decided_at"] or "") or None,
            decision_note=review["decision_note"],
            result_version=self.version(review["result_version"]),
        )
        try:
            with transaction.atomic():
                item.save()
        except IntegrityError:
            self.report.conflicts.append(f"review {review['id']} (an identical one is open here)")
            return
        DreamReviewItem.objects.filter(pk=item.pk).update(
            created_at=parse_datetime(review["created_at"])
        )
        related = [self.ids.get(i, i) for i in review["related_documents"]]
        item.related_documents.set(MemoryDocument.objects.filter(pk__in=related))
        self.report.reviews += 1


def _check_trust(line: dict, store: MemoryStore) -> None:
    if store.scope in PRIVATE_SCOPES and line["trust"] in REVIEWED_TRUST:
        raise Refused(
            f"trust: {line['trust']} comes from a reviewer or a seed, never in a "
            f"{store.scope} store ({store.slug})"
        )


def _database_refusal(error: DatabaseError) -> str:
    """What the database refused, without its DETAIL: that quotes the row."""
    diag = getattr(error.__cause__, "diag", None)
    if diag is not None and diag.constraint_name:
        return f"the database refused it (constraint {diag.constraint_name})"
    return f"the database refused it ({type(error).__name__})"


def memory_import(
    lines: Iterable[str | bytes], *, mode: str = "skip", store_map: dict[str, str] | None = None
) -> ImportReport:
    """Import an export; all or nothing (see the module docstring).

    `lines` may be bytes (a file opened in binary): a line that is not
    UTF-8 is then refused by its number alone.
    """
    importer = _Importer(mode, store_map or {})
    where = "the review decisions"
    try:
        with transaction.atomic():
            for number, line in checked_lines(lines):
                where = f"line {number}"
                if line["type"] == "store":
                    importer.store_lines[line["ref"]] = line
                    importer.named.add(line["ref"])
                else:
                    importer.document(number, line)
            where = "the review decisions"
            importer.finish()
            if unknown := sorted(set(importer.store_map) - importer.named):
                raise InvalidInput(
                    "The import was refused; nothing was written. The file holds no store "
                    f"{', '.join(unknown)} to import as another (it holds "
                    f"{', '.join(sorted(importer.named)) or 'none'})."
                )
    except Refused as error:
        raise InvalidInput(
            f"The import was refused; nothing was written. {where}: {error}"
        ) from None
    except DatabaseError as error:
        raise InvalidInput(
            f"The import was refused; nothing was written. {where}: {_database_refusal(error)}"
        ) from error
    return importer.report
