"""The idempotent startup seed (DESIGN §8).

Creates the two workspace stores and the four convention documents when
they are missing. A document already present is left as it is, so edits made
by reviewers survive every later `migrate`.
"""

from dataclasses import dataclass, field
from pathlib import Path

from django.db import DEFAULT_DB_ALIAS, connections, transaction

from memory_app.models import DocType, MemoryDocument, Trust
from memory_app.services.documents import document_create, embedding_for
from memory_app.services.stores import store_workspace_ensure

SEED_DIR = Path(__file__).resolve().parent.parent / "seed"


@dataclass(frozen=True)
class SeedDocument:
    path: str
    title: str
    recall_hint: str
    tags: tuple[str, ...]
    always_inject: bool = False

    @property
    def content(self) -> str:
        return (SEED_DIR / f"{self.path}.md").read_text(encoding="utf-8").strip()


WORKSPACE_STORES = {
    "workspace_conventions": (
        "Workspace conventions",
        "Rules every agent and engineer follows; changed only by review.",
    ),
    "workspace_runbooks": (
        "Workspace runbooks",
        "Reviewed operational runbooks shared by everyone.",
    ),
}

CONVENTIONS = (
    SeedDocument(
        path="verification-policy",
        title="Verification policy",
        recall_hint=(
            "Before acting on anything memory says about live systems; every operations turn."
        ),
        tags=("policy", "verification"),
        always_inject=True,
    ),
    SeedDocument(
        path="mutation-approval-policy",
        title="Mutation approval policy",
        recall_hint="Before changing infrastructure, data or access: who must approve and how.",
        tags=("policy", "approval"),
    ),
    SeedDocument(
        path="memory-write-policy",
        title="Memory write policy",
        recall_hint="Before saving, updating or proposing a memory: what may be written where.",
        tags=("policy", "memory"),
    ),
    SeedDocument(
        path="advisory-memory-disclaimer",
        title="Memory is advisory",
        recall_hint="Whenever memory context is present: how much to trust it.",
        tags=("policy", "memory"),
        always_inject=True,
    ),
)


@dataclass
class SeedReport:
    created: list[str] = field(default_factory=list)


def memory_seed(*, using: str = DEFAULT_DB_ALIAS) -> SeedReport:
    """Create missing seed stores and documents; touch nothing that exists.

    Runs after every `migrate` and from `manage.py seed_memory`; safe to run
    from several processes at once (a concurrent creator wins, we skip).
    """
    report = SeedReport()
    with transaction.atomic(using=using):
        # One seeder at a time: a transaction-level advisory lock.
        with connections[using].cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtext('memory_seed'))")
        stores = {
            slug: store_workspace_ensure(slug=slug, name=name, description=description)
            for slug, (name, description) in WORKSPACE_STORES.items()
        }
        conventions = stores["workspace_conventions"]
        existing = set(
            MemoryDocument.objects.filter(store=conventions).values_list("path", flat=True)
        )
        for seed in CONVENTIONS:
            if seed.path in existing:
                continue
            document_create(
                store=conventions,
                path=seed.path,
                title=seed.title,
                recall_hint=seed.recall_hint,
                content=seed.content,
                doc_type=DocType.CONVENTION,
                trust=Trust.SYSTEM_SEEDED,
                tags=seed.tags,
                always_inject=seed.always_inject,
                importance=9,
                author=None,
                embedding=embedding_for(seed.title, seed.recall_hint, seed.content),
            )
            report.created.append(f"{conventions.slug}/{seed.path}")
    return report
