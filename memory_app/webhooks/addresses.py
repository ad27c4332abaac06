"""How a webhook's URL is shown on pages and in messages: enough to tell one
endpoint from another, never a credential the URL carries.

Scheme, host, port and path are kept. A user name and password are dropped,
the query becomes `?…` (receivers take tokens there: `?token=`), and so does
a path segment that looks generated rather than named, since many receivers
make the path itself the credential (`/services/T0/B0/<token>`,
`/api/webhooks/<id>/<token>`).
"""

import re

import httpx

HIDDEN = "…"
# Generated: 16+ characters mixing letters with digits or both cases (a
# token, a UUID), or 24+ characters of anything (a long random word).
_GENERATED = re.compile(
    r"(?=.*[A-Za-z])(?=.*\d).{16,}|(?=.*[a-z])(?=.*[A-Z]).{16,}|.{24,}", re.DOTALL
)


def _shown_segment(segment: str) -> str:
    return HIDDEN if _GENERATED.fullmatch(segment) else segment


def masked_url(url: str) -> str:
    """`url` without its user info and query, and with token-like path
    segments hidden; `…` alone for a URL that does not parse (none is
    registered, since registration reads it with the same parser)."""
    try:
        target = httpx.URL(url)
    except httpx.InvalidURL:
        return HIDDEN
    raw_path = target.raw_path.split(b"?", 1)[0].decode("ascii")
    path = "/".join(_shown_segment(segment) for segment in raw_path.split("/"))
    query = f"?{HIDDEN}" if target.query else ""
    return f"{target.scheme}://{target.netloc.decode('ascii')}{path}{query}"
