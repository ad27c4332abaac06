"""Content hashes and the keyed, tamper-evident version chain (DESIGN §9).

Each link is an HMAC-SHA256 over the link before it and this version's
content hash, change, actor and time. The key lives outside the database
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


def chain_sha256(
    *,
    key: ChainKey,
    previous_chain: str,
    version: int,
    change: str,
    content_sha256: str,
    author_name: str,
    created_at: datetime,
) -> str:
    """Sign one link of a document's history over the link before it.

    Rewriting any earlier version's content, actor or time changes every
    later link, which only the key's holder can recompute.
    """
    link = json.dumps(
        [previous_chain, version, change, content_sha256, author_name, created_at.isoformat()],
        separators=(",", ":"),
    )
    return hmac.new(key.secret, link.encode("utf-8"), hashlib.sha256).hexdigest()


def chain_relinked(rows: Iterable, key: ChainKey) -> Iterator[tuple[object, dict]]:
    """Each version row, oldest first, with the link fields `key` would sign.

    Content hashes are recomputed from the content: used after a redaction
    changed old content, and to re-sign a verified history with a new key.
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
        )
        yield row, {"sha256": sha, "parent_sha256": previous_sha, "chain_sha256": link}
        previous_chain, previous_sha = link, sha
