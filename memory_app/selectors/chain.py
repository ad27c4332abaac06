"""Checking a document's keyed version chain (DESIGN §9, tamper-evident history),
and that its head is what the chain's last link recorded."""

from collections.abc import Mapping
from dataclasses import dataclass

from django.utils.dateparse import parse_datetime

from memory_app.hashing import (
    GENESIS,
    chain_key_current,
    chain_keyring,
    chain_sha256,
    row_record_sha256,
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
    # The version's record, signed with its link (hashing.record_sha256).
    "title",
    "recall_hint",
    "reason",
    "run_id",
    "metadata",
)
# What a version records of the head besides its content: its text, and in
# `metadata` the head's other fields after the change (head_metadata).
# `state` and `always_inject` are not compared: they flip in place, without
# a version (services/constrain.py, services/curate.py).
HEAD_TEXT = ("title", "recall_hint", "content")
HEAD_METADATA = ("doc_type", "trust", "tags", "entities", "importance", "expires_at")


@dataclass(frozen=True)
class ChainStatus:
    intact: bool
    versions: int
    broken_at: int | None = None
    problem: str = ""
    retired_keys: int = 0


def version_chain_verify(document: MemoryDocument, *, records: bool = True) -> ChainStatus:
    """Recompute every link of the document's history, oldest first, then
    compare the head with the last version.

    Links sign each version's record (hashing.record_sha256); `records=False`
    checks them as they were signed before, for `memory_verify --rekey` to
    sign such a history again in full (one migration 0019 could not, its
    key then missing from the keyring).

    A link signed by a key not in the keyring is broken: without the key
    nobody can tell a forged link from a real one. A head that is not what
    its last version recorded was rewritten outside the app: readers get
    text the history does not hold. `retired_keys` counts links still
    signed by a retired key (to re-sign with `--rekey`).
    """
    keyring = chain_keyring()
    current = chain_key_current().id
    previous_chain = GENESIS
    previous_sha = ""
    count = retired = 0
    last = None
    rows = document.versions.order_by("version").only(*CHAIN_FIELDS)
    rows = rows.prefetch_related("source_refs")
    for count, row in enumerate(rows.iterator(chunk_size=500), start=1):
        if row.version != count:
            # Named by the number that is missing, as an import names it.
            problem = f"missing (the next version stored is {row.version})"
            return ChainStatus(False, count, count, problem)
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
            record_sha256=row_record_sha256(row) if records else None,
        )
        if expected != row.chain_sha256:
            return ChainStatus(False, count, row.version, "chain hash does not match")
        retired += key.id != current
        previous_chain, previous_sha = row.chain_sha256, row.sha256
        last = row
    if last is None or last.version != document.version:
        problem = f"the head is at this version, the history ends at version {count}"
        return ChainStatus(False, count, document.version, problem)
    head = {
        name: getattr(document, name) for name in (*HEAD_TEXT, "content_sha256", *HEAD_METADATA)
    }
    recorded = {name: getattr(last, name) for name in (*HEAD_TEXT, "sha256", "metadata")}
    if differ := head_differences(head, recorded):
        problem = f"the head differs from it in {', '.join(differ)}"
        return ChainStatus(False, count, last.version, problem)
    return ChainStatus(True, count, retired_keys=retired)


def head_differences(head: Mapping, version: Mapping) -> list[str]:
    """The names of the head's fields that differ from what a version recorded.

    Both map names to values as a row (or an export's line) holds them: the
    head's `content_sha256` is compared with the version's `sha256`, and
    moments as instants (metadata keeps them as text). A field an older
    version's metadata does not hold is not compared.
    """
    differ = [name for name in HEAD_TEXT if head[name] != version[name]]
    if head["content_sha256"] != version["sha256"]:
        differ.append("content_sha256")
    metadata = version["metadata"]
    for name in HEAD_METADATA:
        if name in metadata and _comparable(name, head[name]) != _comparable(name, metadata[name]):
            differ.append(name)
    return differ


def _comparable(name: str, value: object) -> object:
    if name == "expires_at" and isinstance(value, str):
        return parse_datetime(value)
    return value
