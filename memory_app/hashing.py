"""Content hashes and the tamper-evident version chain (DESIGN §9)."""

import hashlib
import json
from datetime import datetime

GENESIS = ""


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def chain_sha256(
    *,
    previous_chain: str,
    version: int,
    change: str,
    content_sha256: str,
    author_name: str,
    created_at: datetime,
) -> str:
    """Hash one link of a document's history over the link before it.

    Rewriting any earlier version's content, actor or time changes every
    later link, which `version_chain_verify` detects.
    """
    link = json.dumps(
        [previous_chain, version, change, content_sha256, author_name, created_at.isoformat()],
        separators=(",", ":"),
    )
    return hashlib.sha256(link.encode("utf-8")).hexdigest()
