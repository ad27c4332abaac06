"""The memory data model.

Rules that keep the data sound are enforced by PostgreSQL as well as here:
scope CHECKs on stores, path syntax, value ranges, unique paths, one store
per user/system/conversation, and immutable versions (a trigger, see
migration 0002). Writes go through `memory_app.services`; nothing else saves
a document or a version.
"""

import uuid

from django.conf import settings
from django.contrib.auth.models import Group
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.db.models import Q
from pgvector.django import HnswIndex, VectorField

from memory_app.paths import PATH_REGEX, STORE_SLUG_REGEX
from memory_app.webhooks.addresses import masked_url

EMBEDDING_DIMENSIONS = 384


def _in(field: str, choices: type[models.TextChoices]) -> Q:
    return Q(**{f"{field}__in": choices.values})


class Principal(models.Model):
    """What the product knows about a Django user beyond auth itself.

    Also carries the product's permissions, so they show up by name in the
    admin's group and user forms.
    """

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="principal"
    )
    is_service_account = models.BooleanField(
        default=False, help_text="An unattended agent: per-run write caps apply."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        permissions = [
            ("read_memory", "Can read memory (granted by default)"),
            ("manage_memory", "Can write memory (granted by default)"),
            ("review_promotions", "Can decide promotions and use the review pages"),
            ("act_on_behalf", "Can act on behalf of another user (X-Memory-On-Behalf-Of)"),
        ]

    def __str__(self) -> str:
        return str(self.user)


class GroupMemoryPolicy(models.Model):
    """Revokes the default memory permissions for every member of a group.

    "read memory" and "manage memory" are on for everybody; a group row with
    a flag turned off takes that permission away from its members, whatever
    other groups they are in.
    """

    group = models.OneToOneField(Group, on_delete=models.CASCADE, related_name="memory_policy")
    can_read_memory = models.BooleanField(default=True)
    can_manage_memory = models.BooleanField(default=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "group memory policies"

    def __str__(self) -> str:
        return f"memory policy of {self.group}"


class ApiKey(models.Model):
    """An API key of a user; only its SHA-256 is stored."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_keys"
    )
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=12, help_text="First characters, to recognise a key.")
    key_sha256 = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "API key"

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.user})"


class System(models.Model):
    """A service of the engineering catalog; its memory is read by team grant."""

    slug = models.SlugField(max_length=100, unique=True)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug


class GrantLevel(models.TextChoices):
    READ = "read", "read"
    MANAGE = "manage", "manage"


class SystemGrant(models.Model):
    system = models.ForeignKey(System, on_delete=models.CASCADE, related_name="grants")
    team = models.ForeignKey(Group, on_delete=models.CASCADE, related_name="system_grants")
    level = models.CharField(max_length=10, choices=GrantLevel.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["system", "team"], name="systemgrant_one_per_team"),
            models.CheckConstraint(condition=_in("level", GrantLevel), name="systemgrant_level"),
        ]

    def __str__(self) -> str:
        return f"{self.team} {self.level} {self.system}"


class Conversation(models.Model):
    """A conversation named by the agent runtime (X-Memory-Conversation)."""

    external_id = models.CharField(max_length=200, unique=True)
    participants = models.ManyToManyField(
        settings.AUTH_USER_MODEL, related_name="memory_conversations"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.external_id


class Scope(models.TextChoices):
    WORKSPACE = "workspace", "workspace"
    SYSTEM = "system", "system"
    USER = "user", "user"
    CONVERSATION = "conversation", "conversation"


class MemoryStore(models.Model):
    """A named container of documents; its scope decides who reads and writes."""

    slug = models.CharField(max_length=120, unique=True)
    scope = models.CharField(max_length=20, choices=Scope.choices)
    name = models.CharField(max_length=200, blank=True)
    description = models.TextField(blank=True)
    owner = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="memory_store",
    )
    system = models.OneToOneField(
        System, null=True, blank=True, on_delete=models.PROTECT, related_name="store"
    )
    conversation = models.OneToOneField(
        Conversation, null=True, blank=True, on_delete=models.PROTECT, related_name="store"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug"]
        constraints = [
            models.CheckConstraint(condition=_in("scope", Scope), name="store_scope"),
            models.CheckConstraint(
                condition=Q(slug__regex=STORE_SLUG_REGEX), name="store_slug_syntax"
            ),
            models.CheckConstraint(
                condition=(
                    Q(
                        scope=Scope.WORKSPACE,
                        owner__isnull=True,
                        system__isnull=True,
                        conversation__isnull=True,
                    )
                    | Q(
                        scope=Scope.USER,
                        owner__isnull=False,
                        system__isnull=True,
                        conversation__isnull=True,
                    )
                    | Q(
                        scope=Scope.SYSTEM,
                        owner__isnull=True,
                        system__isnull=False,
                        conversation__isnull=True,
                    )
                    | Q(
                        scope=Scope.CONVERSATION,
                        owner__isnull=True,
                        system__isnull=True,
                        conversation__isnull=False,
                    )
                ),
                name="store_scope_binding",
                violation_error_message=(
                    "A workspace store is bound to nothing, a user store to its owner, "
                    "a system store to its system, a conversation store to its conversation."
                ),
            ),
        ]

    def __str__(self) -> str:
        return self.slug

    @property
    def label(self) -> str:
        """The store as people say it, with the names the API uses for it
        (API.md, "Store names"): `system:payments-api` is "payments-api",
        `user:alice` is "alice (private)", `conversation:conv-4711` is
        "conversation conv-4711", and a workspace store is its slug.

        Lists select owner, system and conversation with the store.
        """
        if self.scope == Scope.SYSTEM:
            return self.system.slug
        if self.scope == Scope.USER:
            return f"{self.owner.get_username()} (private)"
        if self.scope == Scope.CONVERSATION:
            return f"conversation {self.conversation.external_id}"
        return self.slug


class DocType(models.TextChoices):
    RUNBOOK = "runbook"
    CHECKLIST = "checklist"
    INCIDENT = "incident"
    SERVICE_PATTERN = "service_pattern"
    VERIFICATION = "verification"
    CONVENTION = "convention"
    USER_PREFERENCE = "user_preference"
    FACT = "fact"
    NOTE = "note"


class Trust(models.TextChoices):
    ADMIN_APPROVED = "admin_approved"
    SYSTEM_SEEDED = "system_seeded"
    USER_AUTHORED = "user_authored"
    AGENT_DRAFT = "agent_draft"


TRUST_WEIGHT = {
    Trust.ADMIN_APPROVED: 1.0,
    Trust.SYSTEM_SEEDED: 0.95,
    Trust.USER_AUTHORED: 0.85,
    Trust.AGENT_DRAFT: 0.45,
}


class DocState(models.TextChoices):
    ACTIVE = "active"
    CONSTRAINED = "constrained"
    SUPERSEDED = "superseded"
    TOMBSTONED = "tombstoned"


# Live documents: readable and retrievable. A constrained one is under review
# and is injected only among the untrusted candidates.
LIVE_STATES = (DocState.ACTIVE, DocState.CONSTRAINED)


class MemoryDocument(models.Model):
    """The current head of a path-addressed document; its history is MemoryVersion."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    store = models.ForeignKey(MemoryStore, on_delete=models.PROTECT, related_name="documents")
    path = models.CharField(max_length=200)
    title = models.CharField(max_length=300)
    recall_hint = models.TextField(blank=True)
    content = models.TextField()
    content_sha256 = models.CharField(max_length=64)
    version = models.PositiveIntegerField(default=1)
    doc_type = models.CharField(max_length=20, choices=DocType.choices, default=DocType.NOTE)
    trust = models.CharField(max_length=20, choices=Trust.choices)
    state = models.CharField(max_length=20, choices=DocState.choices, default=DocState.ACTIVE)
    always_inject = models.BooleanField(default=False)
    tags = ArrayField(models.CharField(max_length=64), default=list, blank=True)
    entities = models.JSONField(default=dict, blank=True)
    importance = models.PositiveSmallIntegerField(default=5)
    hit_count = models.PositiveIntegerField(default=0)
    last_used_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    search_vector = models.GeneratedField(
        expression=(
            SearchVector("title", weight="A", config="english")
            + SearchVector("recall_hint", weight="B", config="english")
            + SearchVector("content", weight="C", config="english")
        ),
        output_field=SearchVectorField(),
        db_persist=True,
    )
    embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS, null=True, blank=True)
    embedding_model = models.CharField(max_length=100, blank=True)
    promoted_from = models.ForeignKey(
        "MemoryVersion",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="promoted_into",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["store", "path"], name="document_unique_path"),
            models.CheckConstraint(
                condition=Q(path__regex=PATH_REGEX), name="document_path_syntax"
            ),
            models.CheckConstraint(
                condition=Q(importance__lte=10), name="document_importance_range"
            ),
            models.CheckConstraint(condition=_in("doc_type", DocType), name="document_doc_type"),
            models.CheckConstraint(condition=_in("trust", Trust), name="document_trust"),
            models.CheckConstraint(condition=_in("state", DocState), name="document_state"),
            models.CheckConstraint(condition=Q(version__gte=1), name="document_version_positive"),
        ]
        indexes = [
            HnswIndex(
                name="document_embedding_hnsw",
                fields=["embedding"],
                m=16,
                ef_construction=256,
                opclasses=["vector_cosine_ops"],
            ),
            models.Index(fields=["store", "state"], name="document_store_state"),
            models.Index(
                fields=["store", "path"],
                opclasses=["int8_ops", "varchar_pattern_ops"],
                name="document_path_prefix",
            ),
            models.Index(
                fields=["expires_at"],
                name="document_expiry",
                condition=Q(expires_at__isnull=False, state="active"),
            ),
            # Every memory_context reads the pinned documents of its stores:
            # a handful of rows that must not cost a scan of the whole table.
            # The condition names no state: a query for the live states
            # (active or constrained) cannot use an index kept for one.
            models.Index(
                fields=["store"],
                name="document_pinned_any_state",
                condition=Q(always_inject=True),
            ),
            GinIndex(fields=["tags"], name="document_tags_gin"),
            # A question about a time reads the memories written or changed
            # then (selectors/candidates.py, `_window_condition`).
            models.Index(fields=["store", "created_at"], name="document_store_created"),
            models.Index(fields=["store", "updated_at"], name="document_store_updated"),
        ]

    def __str__(self) -> str:
        return f"{self.store.slug}/{self.path}"


class DocumentTerms(models.Model):
    """A document's searchable words, with the columns a search filters on,
    in a narrow row of their own: the lexical index the candidate statement
    reads (selectors/candidates.py).

    A term's matches are read row by row to rank them and test their store
    and state. In the documents table each of those rows carries its text
    and its vector (some 2 kB, four rows to a page); here it is the words
    and six small columns (some 600 bytes), so the same matches touch a
    third of the pages: at 100,000 documents a term read took 1.3 ms here
    against 3.1 ms there (docs/benchmarks.md). PostgreSQL keeps these rows:
    a trigger (migration 0012) writes one whenever a document is inserted
    or one of these columns or its text changes, and the row goes with its
    document. Nothing in the application writes them.
    """

    document = models.OneToOneField(
        MemoryDocument,
        primary_key=True,
        db_column="id",
        # PostgreSQL deletes the row with its document (ON DELETE CASCADE,
        # migration 0012); Django does not collect it first.
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        related_name="+",
    )
    store_id = models.BigIntegerField()
    state = models.CharField(max_length=20)
    trust = models.CharField(max_length=20)
    doc_type = models.CharField(max_length=20)
    tags = ArrayField(models.CharField(max_length=64), default=list)
    expires_at = models.DateTimeField(null=True)
    search_vector = SearchVectorField()

    class Meta:
        indexes = [
            GinIndex(fields=["search_vector"], name="terms_search_gin"),
            models.Index(fields=["store_id"], name="terms_store"),
        ]

    def __str__(self) -> str:
        return f"terms of {self.document_id}"


class ChangeKind(models.TextChoices):
    CREATE = "create"
    UPDATE = "update"
    PATCH = "patch"
    PROMOTE = "promote"
    MERGE = "merge"
    ROLLBACK = "rollback"
    TOMBSTONE = "tombstone"
    RESTORE = "restore"
    SUPERSEDE = "supersede"
    REDACT = "redact"


class MemoryVersion(models.Model):
    """One immutable row per change of a document: the write-ahead log.

    PostgreSQL refuses UPDATE, DELETE and TRUNCATE of these rows (triggers
    in migrations 0002 and 0006; only a redaction or a re-keying rewrites
    them). `chain_sha256` is an HMAC, with the key named by `chain_key_id`,
    of the previous version's chain hash and this version's content hash,
    actor, time and record (hashing.record_sha256: its other texts, the
    head's other fields, its source refs), so a history rewritten without
    the key shows.
    """

    # No index of its own: the unique (document, version) serves it.
    document = models.ForeignKey(
        MemoryDocument, on_delete=models.PROTECT, related_name="versions", db_index=False
    )
    version = models.PositiveIntegerField()
    change = models.CharField(max_length=20, choices=ChangeKind.choices)
    title = models.CharField(max_length=300)
    recall_hint = models.TextField(blank=True)
    content = models.TextField()
    sha256 = models.CharField(max_length=64)
    parent_sha256 = models.CharField(max_length=64, blank=True)
    chain_sha256 = models.CharField(max_length=64)
    chain_key_id = models.CharField(
        max_length=16, blank=True, help_text="Fingerprint of the key that signed the link."
    )
    metadata = models.JSONField(
        default=dict,
        blank=True,
        help_text="The head's other fields after this change (doc_type, trust, state, tags, …).",
    )
    # No index of its own: version_author_time leads with it.
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        db_index=False,
    )
    author_name = models.CharField(max_length=150, help_text="The actor as hashed in the chain.")
    on_behalf_of = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
    )
    run_id = models.CharField(max_length=200, blank=True)
    reason = models.TextField(blank=True)
    scanner_version = models.CharField(max_length=40, blank=True)
    findings = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["document", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["document", "version"], name="version_unique_number"),
            models.CheckConstraint(condition=_in("change", ChangeKind), name="version_change"),
            models.CheckConstraint(condition=Q(version__gte=1), name="version_positive"),
        ]
        indexes = [
            # The write quotas count an author's versions per run and per
            # minute. The run's count reads by run (policy._write_counts).
            models.Index(fields=["run_id", "author"], name="version_run_author"),
            models.Index(fields=["author", "created_at"], name="version_author_time"),
        ]

    def __str__(self) -> str:
        return f"{self.document_id} v{self.version}"


class SourceKind(models.TextChoices):
    TOOL_CALL = "tool_call"
    RUN = "run"
    CONVERSATION = "conversation"
    INCIDENT = "incident"
    URL = "url"
    DOCUMENT = "document"


class MemorySourceRef(models.Model):
    """Evidence behind a version: the tool calls, runs, incidents it came from."""

    version = models.ForeignKey(MemoryVersion, on_delete=models.PROTECT, related_name="source_refs")
    kind = models.CharField(max_length=20, choices=SourceKind.choices)
    ref = models.CharField(max_length=500)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=_in("kind", SourceKind), name="sourceref_kind"),
        ]

    def __str__(self) -> str:
        return f"{self.kind}:{self.ref}"


class ContextTrace(models.Model):
    """One memory_context call: every candidate, what the budget cut, what was sent.

    The message itself is not kept (it may hold anything a user typed); its
    hash ties the trace to logs that do.
    """

    principal = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    conversation = models.ForeignKey(
        Conversation, null=True, blank=True, on_delete=models.CASCADE, related_name="traces"
    )
    run_id = models.CharField(max_length=200, blank=True)
    message_sha256 = models.CharField(max_length=64)
    candidates = models.JSONField(default=list)
    context_sha256 = models.CharField(max_length=64)
    tokens = models.PositiveIntegerField()
    token_budget = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["run_id"], name="trace_run")]

    def __str__(self) -> str:
        return f"trace {self.pk} ({self.run_id or 'no run'})"


class ContextBlock(models.TextChoices):
    ALWAYS = "always"
    TRUSTED = "trusted"
    UNTRUSTED = "untrusted"


class MemoryUsage(models.Model):
    """One document injected into one model turn, and whether it was used.

    Written a dozen at a time on every memory_context call, by the statement
    that writes their trace and event (services/context_audit.py), naming
    rows that statement writes or that the turn has just read. The database
    does not check those references (`db_constraint=False`): per row, five
    key checks, each locking the row it finds (the injected documents'
    among them); with two unread indexes, a quarter to a third of the
    audit's time (docs/benchmarks.md, "The audit of a turn"). Deletes go
    through the ORM, which cascades as `on_delete` says; the application
    deletes none of these rows' targets.
    """

    run_id = models.CharField(max_length=200, blank=True)
    conversation = models.ForeignKey(
        Conversation,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="usages",
        db_constraint=False,
    )
    principal = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_constraint=False
    )
    # Read by document through `usage_document`, which leads with it.
    document = models.ForeignKey(
        MemoryDocument,
        on_delete=models.CASCADE,
        related_name="usages",
        db_constraint=False,
        db_index=False,
    )
    version = models.PositiveIntegerField()
    rank = models.PositiveSmallIntegerField()
    score = models.FloatField()
    components = models.JSONField(default=dict)
    block = models.CharField(max_length=10, choices=ContextBlock.choices)
    tokens = models.PositiveIntegerField()
    hit = models.BooleanField(default=False)
    trace = models.ForeignKey(
        ContextTrace,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="usages",
        db_constraint=False,
    )
    # Never read by event: no index.
    event = models.ForeignKey(
        "MemoryEvent",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_constraint=False,
        db_index=False,
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            models.Index(fields=["run_id"], name="usage_run"),
            models.Index(fields=["document", "created_at"], name="usage_document"),
        ]
        constraints = [
            models.CheckConstraint(condition=_in("block", ContextBlock), name="usage_block"),
        ]

    def __str__(self) -> str:
        return f"{self.run_id or 'run?'} → {self.document_id}"


class DreamKind(models.TextChoices):
    PROMOTION = "promotion"
    DELETION = "deletion"
    CONSOLIDATE = "consolidate"
    COMPACT = "compact"
    CONTRADICTIONS = "contradictions"
    EXPIRE = "expire"
    ROTATE = "rotate"
    EMBED = "embed"
    RESCAN = "rescan"
    CANARY = "canary"
    USAGE = "usage"


class JobStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    AWAITING_REVIEW = "awaiting_review"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    REJECTED = "rejected"


class DreamJob(models.Model):
    """One unit of offline work; its proposals are DreamReviewItems."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    kind = models.CharField(max_length=20, choices=DreamKind.choices)
    status = models.CharField(max_length=20, choices=JobStatus.choices, default=JobStatus.QUEUED)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    # Runs started: a run lost to a killed worker leaves no error, only this count.
    attempts = models.PositiveIntegerField(default=0)
    stats = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=_in("kind", DreamKind), name="dreamjob_kind"),
            models.CheckConstraint(condition=_in("status", JobStatus), name="dreamjob_status"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.status}"


class ReviewAction(models.TextChoices):
    PROMOTE = "promote"
    MERGE = "merge"
    SUPERSEDE = "supersede"
    TOMBSTONE = "tombstone"


class ReviewStatus(models.TextChoices):
    PENDING = "pending"
    DEFERRED = "deferred"
    APPROVED = "approved"
    REJECTED = "rejected"


class DreamReviewItem(models.Model):
    """A proposal a human decides: promote, merge, supersede or tombstone."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    job = models.ForeignKey(DreamJob, on_delete=models.CASCADE, related_name="items")
    action = models.CharField(max_length=20, choices=ReviewAction.choices)
    status = models.CharField(
        max_length=20, choices=ReviewStatus.choices, default=ReviewStatus.PENDING
    )
    source_document = models.ForeignKey(
        MemoryDocument, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    source_version = models.ForeignKey(
        MemoryVersion, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    target_store = models.ForeignKey(
        MemoryStore, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    target_path = models.CharField(max_length=200, blank=True)
    proposed_title = models.CharField(max_length=300, blank=True)
    proposed_content = models.TextField(blank=True)
    rationale = models.TextField(blank=True)
    findings = models.JSONField(default=list, blank=True)
    related_documents = models.ManyToManyField(MemoryDocument, blank=True, related_name="+")
    proposed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
    )
    run_id = models.CharField(max_length=200, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    decision_note = models.TextField(blank=True)
    result_version = models.ForeignKey(
        MemoryVersion, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at"]
        constraints = [
            models.CheckConstraint(condition=_in("action", ReviewAction), name="reviewitem_action"),
            models.CheckConstraint(condition=_in("status", ReviewStatus), name="reviewitem_status"),
            models.CheckConstraint(
                condition=Q(target_path="") | Q(target_path__regex=PATH_REGEX),
                name="reviewitem_target_path_syntax",
            ),
            # Two identical open proposals can never exist, even when racing.
            models.UniqueConstraint(
                fields=["action", "source_version", "target_store", "target_path"],
                condition=Q(status__in=["pending", "deferred"]),
                name="reviewitem_one_open_proposal",
                nulls_distinct=False,
            ),
        ]
        indexes = [
            models.Index(fields=["status", "created_at"], name="reviewitem_queue"),
            # The write quotas count an agent's requests per run and per
            # minute. The run's count reads by run (policy._write_counts).
            models.Index(fields=["run_id", "proposed_by"], name="reviewitem_run_proposer"),
            models.Index(fields=["proposed_by", "created_at"], name="reviewitem_proposer_time"),
        ]

    def __str__(self) -> str:
        return f"{self.action} {self.status}"


class MemoryEvent(models.Model):
    """The outbox: every notable thing, in order, readable by cursor."""

    type = models.CharField(max_length=60)
    principal = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    # Read by conversation through `event_conversation`, which leads with it.
    conversation = models.ForeignKey(
        Conversation,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="events",
        db_index=False,
    )
    document = models.ForeignKey(
        MemoryDocument, null=True, blank=True, on_delete=models.SET_NULL, related_name="events"
    )
    payload = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        indexes = [
            models.Index(fields=["type", "id"], name="event_type"),
            models.Index(fields=["conversation", "id"], name="event_conversation"),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.type}"


class Webhook(models.Model):
    """An HTTPS endpoint staff registered for some event types (memory_app/webhooks/).

    `cursor` is the last outbox event the dispatcher has considered for it, so
    each endpoint receives every matching event once, from its registration on.
    """

    url = models.URLField(max_length=500)
    event_types = ArrayField(models.CharField(max_length=60))
    secret = models.CharField(max_length=64)
    active = models.BooleanField(default=True)
    cursor = models.BigIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        # Shown in the admin and in logs: never a credential the URL carries.
        return masked_url(self.url)


class DeliveryStatus(models.TextChoices):
    PENDING = "pending"
    RETRYING = "retrying"
    DELIVERED = "delivered"
    FAILED = "failed"


class WebhookDelivery(models.Model):
    """One event sent (or being sent) to one webhook, with the last attempt's outcome."""

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    event = models.ForeignKey(MemoryEvent, on_delete=models.CASCADE, related_name="+")
    status = models.CharField(
        max_length=10, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING
    )
    attempts = models.PositiveSmallIntegerField(default=0)
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["webhook", "event"], name="delivery_once"),
            models.CheckConstraint(condition=_in("status", DeliveryStatus), name="delivery_status"),
        ]
        indexes = [models.Index(fields=["webhook", "-id"], name="delivery_recent")]

    def __str__(self) -> str:
        return f"{self.webhook_id} ← #{self.event_id} {self.status}"
