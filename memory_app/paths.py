"""Document path and store slug syntax, shared by validation and DB constraints.

A path is 1 to 200 characters of `[a-z0-9._-]` segments joined by `/`, with no
leading or trailing slash and no `..`. The same regular expression is used
by Python validation and by a CHECK constraint, so both always agree.
"""

import hashlib
import re
import unicodedata

PATH_MAX_LENGTH = 200
PATH_REGEX = r"^(?!.*\.\.)[a-z0-9._-]+(/[a-z0-9._-]+)*$"
STORE_SLUG_REGEX = r"^[a-z0-9][a-z0-9_-]*$"

_path_re = re.compile(PATH_REGEX)
_non_path_chars = re.compile(r"[^a-z0-9]+")


def path_error(path: object) -> str | None:
    """Why `path` is not a valid document path, or None when it is."""
    if not isinstance(path, str) or path == "":
        return "A path is required."
    if len(path) > PATH_MAX_LENGTH:
        return f"A path has at most {PATH_MAX_LENGTH} characters."
    if ".." in path:
        return "A path may not contain '..'."
    if not _path_re.match(path):
        return (
            "A path is made of segments of lowercase letters, digits, '.', '_' and '-', "
            "joined by '/', with no leading or trailing slash."
        )
    return None


# Hex digits of the title's digest a derived path carries when the title's
# letters do not all fit in a path.
DIGEST_LENGTH = 8


def path_from_title(title: str) -> str:
    """A path derived from a title: 'Nginx crash loop!' → 'nginx-crash-loop'.

    Accents fold away ('Café' → 'cafe'). Letters a path cannot hold (Chinese,
    Japanese, 'ø', emoji) would leave different titles with one path (every
    Chinese title was 'untitled'), and a write to a derived path updates the
    document there: such a path ends in a digest of the title instead,
    '数据库连接池' → 'note-1f0c2a9b', so one title keeps one path and two
    titles get two.
    """
    decomposed = unicodedata.normalize("NFKD", title)
    ascii_title = decomposed.encode("ascii", "ignore").decode()
    slug = _non_path_chars.sub("-", ascii_title.lower()).strip("-")
    lost = any(not char.isascii() and (char.isalnum() or _is_symbol(char)) for char in decomposed)
    if slug and not lost:
        return slug[:PATH_MAX_LENGTH].rstrip("-")
    digest = hashlib.blake2b(
        unicodedata.normalize("NFC", title).encode(), digest_size=DIGEST_LENGTH // 2
    ).hexdigest()
    stem = slug[: PATH_MAX_LENGTH - DIGEST_LENGTH - 1].rstrip("-") or "note"
    return f"{stem}-{digest}"


def _is_symbol(char: str) -> bool:
    """Emoji and other pictographs: what a title says with them is lost too."""
    return unicodedata.category(char) == "So"
