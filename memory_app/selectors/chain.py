"""Checking a document's version chain (DESIGN §9, tamper-evident history)."""

from dataclasses import dataclass

from memory_app.hashing import GENESIS, chain_sha256, sha256_text
from memory_app.models import MemoryDocument


@dataclass(frozen=True)
class ChainStatus:
    intact: bool
    versions: int
    broken_at: int | None = None
    problem: str = ""


def version_chain_verify(document: MemoryDocument) -> ChainStatus:
    """Recompute every link of the document's history, oldest first."""
    previous_chain = GENESIS
    previous_sha = ""
    count = 0
    rows = document.versions.order_by("version").only(
        "version",
        "change",
        "content",
        "sha256",
        "parent_sha256",
        "chain_sha256",
        "author_name",
        "created_at",
    )
    for count, row in enumerate(rows.iterator(), start=1):
        if row.version != count:
            return ChainStatus(False, count, row.version, "a version number is missing")
        if sha256_text(row.content) != row.sha256:
            return ChainStatus(False, count, row.version, "content does not match its hash")
        if row.parent_sha256 != previous_sha:
            return ChainStatus(False, count, row.version, "parent hash does not match")
        expected = chain_sha256(
            previous_chain=previous_chain,
            version=row.version,
            change=row.change,
            content_sha256=row.sha256,
            author_name=row.author_name,
            created_at=row.created_at,
        )
        if expected != row.chain_sha256:
            return ChainStatus(False, count, row.version, "chain hash does not match")
        previous_chain, previous_sha = row.chain_sha256, row.sha256
    return ChainStatus(True, count)
