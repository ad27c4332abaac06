"""Values that stand in for a credential without being one.

Documentation, templates and sample configs are full of `xxxx`,
`<your-token>`, `${API_KEY}`, `changeme` and vendor prefixes followed by
filler (`AKIAXXXXXXXXXXXXXXXX`). Storing them leaks nothing, so no rule
blocks on them: every credential rule passes its captured value through
`is_placeholder` first.
"""

import re
from urllib.parse import unquote

# Words that mark a value as illustrative wherever they appear in it.
_MARKERS = re.compile(
    r"example|changeme|change[_-]me|placeholder|redacted|dummy|sample|your[_-]?"
    r"|replace[_-]?me|insert[_-]?|todo|fixme|xxxx|\*\*\*|\.\.\.|…",
    re.I,
)
# References to a value kept elsewhere: env vars, template fields, functions.
# A command's output, a subscript, a format field, a bracketed name (the
# [CFWS] of a grammar) or a Markdown image count even when the value was
# cut at their first space or bracket.
_REFERENCE = re.compile(
    r"^(?:\$\{?[\w.:-]+\}?|%[\w]+%|\{\{.*\}\}|\$\(.*|<[^<>]*>|@\{.*\}|\[[^\]]*\]*|[\w.]+\(.*\)?"
    r"|[A-Za-z_][\w.]*\[.*|\{[A-Za-z_][\w.]*\}?|!\[.*"
    r"|(?:os\.)?(?:env|environ|getenv|process\.env)\b.*|vault:.*|secret://.*|ENC\[.*\])$",
    re.I,
)
# An identifier that names a secret (auth_key, db_password) is not a value.
_NAMES_A_SECRET = re.compile(
    r"^(?=.*[_-])[a-z_-]*(?:pass|secret|token|key|pwd|cred)[a-z_-]*$"
    r"|^(?-i:[A-Z][A-Za-z]*(?:Key|Token|Secret|Password)[A-Za-z]*)$",
    re.I,
)
_REPEATED = re.compile(r"^([A-Za-z]{3,}?)\1+$")  # a word repeated: metricsmetrics
_LEET = str.maketrans("$@01345!", "saoleasi")
# Code (a call, a concatenation, a dotted attribute) and file names.
_CODE = re.compile(
    r"\s|\(\)|^[A-Za-z_]+(?:\.[A-Za-z_]+)+$"
    r"|^[\w-]+\.(?:pem|key|crt|cer|p12|pfx|json|ya?ml|txt|env|conf|cfg|ini|jks|keystore)$",
    re.I,
)
_CASE_FLIP = re.compile(r"[a-z][A-Z]|[A-Z][a-z]")
_DIGIT_IN_WORD = re.compile(r"[A-Za-z]\d|\d[A-Za-z]")


# A segment that names: words and numbers joined by "+", "-" or "_" (a
# page title in a URL: LF+AI+Day+-+ONNX+Community), or hex (a commit, a digest).
_TITLE = re.compile(r"(?:[A-Z]?[a-z]+|[A-Z]+|\d+)(?:[+_-]+(?:[A-Z]?[a-z]+|[A-Z]+|\d+))*[+_-]*")
_HEX_NAME = re.compile(r"[0-9a-f]{7,}")


def _random_segment(segment: str) -> bool:
    if _TITLE.fullmatch(segment) or _HEX_NAME.fullmatch(segment):
        return False
    return len(_CASE_FLIP.findall(segment)) >= 3 or len(_DIGIT_IN_WORD.findall(segment)) >= 2


def looks_like_path(token: str) -> bool:
    """A file or URL path: several slash-separated segments that read as names.

    Base64 also contains slashes, but its segments flip case and mix digits
    into letters; a path has at most one such segment, and a short one.
    """
    segments = [s for s in token.split("/") if s]
    random = [s for s in segments if _random_segment(s)]
    return len(segments) >= 3 and len(random) <= 1 and all(len(s) < 20 for s in random)


# Values that are a name for a secret, not a secret.
_WORDS = {
    "password",
    "passwd",
    "pass",
    "pwd",
    "token",
    "key",
    "apikey",
    "api_key",
    "none",
    "null",
    "nil",
    "true",
    "false",
    "undefined",
    "empty",
    "required",
    "optional",
    "string",
    "str",
    "bytes",
    "int",
    "test",
    "testing",
    "foo",
    "bar",
    "foobar",
    "user",
    "username",
    "default",
    "hidden",
    "masked",
    "secret_key",
    "access_key",
    "private_key",
    "credentials",
    "value",
    "string_value",
}


def is_reference(value: str) -> bool:
    """Code (a call, a concatenation) or a path where a generic rule expects a value."""
    return bool(_CODE.search(value.strip())) or looks_like_path(value)


def _spelt_word(value: str) -> bool:
    """One of `_WORDS` spelt with symbols for some letters: p#ssword!, pa%24%24word."""
    spelt = unquote(value).rstrip("!?.").lower().translate(_LEET)
    return any(
        all(a == b or not a.isalnum() for a, b in zip(spelt, word, strict=True))
        and sum(a == b for a, b in zip(spelt, word, strict=True)) > len(word) // 2
        for word in _WORDS_BY_LENGTH.get(len(spelt), ())
    )


_WORDS_BY_LENGTH: dict[int, list[str]] = {}
for _word in _WORDS:
    _WORDS_BY_LENGTH.setdefault(len(_word), []).append(_word)


def is_placeholder(value: str) -> bool:
    value = value.strip().strip("'\"`,;:*")  # quotes, punctuation, *emphasis*
    if len(value) < 4 or value.lower() in _WORDS or _spelt_word(value):
        return True
    if _REPEATED.match(value):
        return True
    if _REFERENCE.match(value) or _MARKERS.search(value) or _NAMES_A_SECRET.match(value):
        return True
    body = re.sub(r"[^A-Za-z0-9]", "", value)
    # One character repeated (AKIA + 16 x's, 0000…): filler after a prefix.
    tail = body[-12:] if len(body) > 12 else body
    return len(set(tail.lower())) <= 2
