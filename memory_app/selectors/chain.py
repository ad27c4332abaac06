"""Checking a document's keyed version chain (DESIGN §9, tamper-evident history)."""

from dataclasses import dataclass

from memory_app.hashing import (
    GENESIS,
    chain_key_current,
    chain_keyring,
    chain_sha256,
    sha256_text,
)
from memory_app.models import MemoryDocument

CHAIN_FIELDS = (
    "version",
    "change",
    "content",
    "sha256",
    "parent_sha256",
    "chain_sha256",
    "chain_key_id",
    "author_name",
    "created_at",
)


@dataclass(frozen=True)
class ChainStatus:
    intact: bool
    versions: int
    broken_at: int | None = None
    problem: str = ""
    retired_keys: int = 0


def version_chain_verify(document: MemoryDocument) -> ChainStatus:
    """Recompute every link of the document's history, oldest first.

    A link signed by a key not in the keyring is broken: without the key
    nobody can tell a forged link from a real one. `retired_keys` counts
    links still signed by a retired key (to re-sign with `--rekey`).
    """
    keyring = chain_keyring()
    current = chain_key_current().id
    previous_chain = GENESIS
    previous_sha = ""
    count = retired = 0
    rows = document.versions.order_by("version").only(*CHAIN_FIELDS)
    for count, row in enumerate(rows.iterator(), start=1):
        if row.version != count:
            return ChainStatus(False, count, row.version, "a version number is missing")
        if sha256_text(row.content) != row.sha256:
            return ChainStatus(False, count, row.version, "content does not match its hash")
        if row.parent_sha256 != previous_sha:
            return ChainStatus(False, count, row.version, "parent hash does not match")
        key = keyring.get(row.chain_key_id)
        if key is None:
            return ChainStatus(False, count, row.version, "signed with an unknown key")
        expected = chain_sha256(
            key=key,
            previous_chain=previous_chain,
            version=row.version,
            change=row.change,
            content_sha256=row.sha256,
            author_name=row.author_name,
            created_at=row.created_at,
        )
        if expected != row.chain_sha256:
            return ChainStatus(False, count, row.version, "chain hash does not match")
        retired += key.id != current
        previous_chain, previous_sha = row.chain_sha256, row.sha256
    return ChainStatus(True, count, retired_keys=retired)
