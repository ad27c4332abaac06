"""Document path and store slug syntax, shared by validation and DB constraints.

A path is 1 to 200 characters of `[a-z0-9._-]` segments joined by `/`, with no
leading or trailing slash and no `..`. The same regular expression is used
by Python validation and by a CHECK constraint, so both always agree.
"""

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


def path_from_title(title: str) -> str:
    """A path derived from a title: 'Nginx crash loop!' → 'nginx-crash-loop'."""
    ascii_title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    slug = _non_path_chars.sub("-", ascii_title.lower()).strip("-")
    return slug[:PATH_MAX_LENGTH].rstrip("-") or "untitled"
