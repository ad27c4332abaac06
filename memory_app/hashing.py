"""Content hashes and the keyed, tamper-evident version chain (DESIGN §9).

Each link is an HMAC-SHA256 over the link before it and this version's
content hash, change, actor and time, and a digest of the rest of what the
version records (`record_sha256`: title, recall hint, reason, run, the
head's other fields such as trust and tags, source refs). The key lives outside the database
(settings.MEMORY_CHAIN_KEY): whoever holds only a database credential can
rewrite rows but cannot compute links that `memory_verify` accepts. Rows
name the key that signed them, so a key can be rotated: the new key signs,
retired keys still verify until `memory_verify --rekey` re-signs everything.
"""

import hashlib
import hmac
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings

GENESIS = ""


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ChainKey:
    id: str
    secret: bytes = b""

    @classmethod
    def from_text(cls, text: str) -> "ChainKey":
        """A key named by a fingerprint of itself: no id to configure or mistype."""
        secret = text.encode("utf-8")
        fingerprint = hmac.new(secret, b"memory-chain-key-id", hashlib.sha256).hexdigest()
        return cls(id=fingerprint[:16], secret=secret)


def chain_key_current() -> ChainKey:
    return ChainKey.from_text(settings.MEMORY_CHAIN_KEY)


def chain_keyring() -> dict[str, ChainKey]:
    """Every key a link may be signed with: the current one and the retired ones."""
    keys = [ChainKey.from_text(text) for text in settings.MEMORY_CHAIN_RETIRED_KEYS]
    keys.append(chain_key_current())
    return {key.id: key for key in keys}


def record_sha256(
    *,
    title: str,
    recall_hint: str,
    reason: str,
    run_id: str,
    metadata: dict,
    source_refs: Iterable[tuple[str, str]],
) -> str:
    """The digest of what a version records besides its content and link.

    Signed with the link: without it, whoever holds a database credential
    could raise a draft's trust in its history and head alike, or swap its
    evidence, and the chain would still verify. Key order and the order of
    the source refs do not matter (JSONB keeps neither).
    """
    refs = sorted([kind, ref] for kind, ref in source_refs)
    record = [title, recall_hint, reason, run_id, metadata, refs]
    return sha256_text(json.dumps(record, sort_keys=True, separators=(",", ":")))


def row_record_sha256(row) -> str:
    """`record_sha256` of a version row whose source refs are prefetched."""
    return record_sha256(
        title=row.title,
        recall_hint=row.recall_hint,
        reason=row.reason,
        run_id=row.run_id,
        metadata=row.metadata,
        source_refs=[(ref.kind, ref.ref) for ref in row.source_refs.all()],
    )


def chain_sha256(
    *,
    key: ChainKey,
    previous_chain: str,
    version: int,
    change: str,
    content_sha256: str,
    author_name: str,
    created_at: datetime,
    record_sha256: str | None,
) -> str:
    """Sign one link of a document's history over the link before it.

    Rewriting any earlier version's content, actor, time or record changes
    every later link, which only the key's holder can recompute. A link
    without a record (`None`) is signed as links were before records were:
    read only to verify such a history once, then sign it again in full.
    """
    fields = [previous_chain, version, change, content_sha256, author_name, created_at.isoformat()]
    if record_sha256 is not None:
        fields.append(record_sha256)
    link = json.dumps(fields, separators=(",", ":"))
    return hmac.new(key.secret, link.encode("utf-8"), hashlib.sha256).hexdigest()


def chain_relinked(rows: Iterable, key: ChainKey) -> Iterator[tuple[object, dict]]:
    """Each version row, oldest first, with the link fields `key` would sign.

    Content hashes are recomputed from the content: used after a redaction
    changed old content, and to re-sign a verified history with a new key.
    The rows' source refs are prefetched (`row_record_sha256`).
    """
    previous_chain, previous_sha = GENESIS, ""
    for row in rows:
        sha = sha256_text(row.content)
        link = chain_sha256(
            key=key,
            previous_chain=previous_chain,
            version=row.version,
            change=row.change,
            content_sha256=sha,
            author_name=row.author_name,
            created_at=row.created_at,
            record_sha256=row_record_sha256(row),
        )
        yield row, {"sha256": sha, "parent_sha256": previous_sha, "chain_sha256": link}
        previous_chain, previous_sha = link, sha
