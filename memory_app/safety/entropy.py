"""Shapeless secrets: long random-looking strings.

A run of 40+ base64/base62 characters with Shannon entropy of at least 4.5
bits per character, mixing upper case, lower case and digits, is treated as
a credential. Hex (git SHAs, sha256 digests, UUIDs) tops out at 4 bits per
character and never reaches the threshold; file paths (several short
slash-separated segments) are not tokens; content digests that are
base64 by design (go.sum `h1:`, SRI `sha512-`, `data:` URIs of images) are
recognised by their prefix and left alone.

Many vendors issue keys of lower case letters and digits only (base36),
which the rule above, wanting both cases, never sees. A run of 36+ such
characters counts too when it is what a generator makes: letters beyond
a-f (so not hex), digits, the two interleaved many times (not a word and
a number, not `abcdef1234567890` filler) and entropy of at least 3.8 bits.
Nix store hashes (32) stay under the length; RFC 4648 base32 (a-z, 2-7:
IPFS content ids, onion addresses) names content, not a key. Public keys
and signatures (armoured, or an OpenSSH key line) are base64 meant to be
shared, and are left alone like a data URI's image.
"""

import math
import re
from collections import Counter

from memory_app.safety import prefilter
from memory_app.safety.placeholders import is_placeholder, looks_like_path
from memory_app.safety.types import Detector, Span

MIN_LENGTH = 40
MIN_BITS_PER_CHAR = 4.5
MIN_BASE36_LENGTH = 36
MIN_BASE36_BITS_PER_CHAR = 3.8
# The shortest run either rule above can flag.
MIN_CANDIDATE_LENGTH = min(MIN_LENGTH, MIN_BASE36_LENGTH)

_CANDIDATE = re.compile(rf"[A-Za-z0-9+/=_-]{{{MIN_CANDIDATE_LENGTH},}}")
_BASE36_RUN = re.compile(rf"[a-z0-9]{{{MIN_BASE36_LENGTH},}}")
_NOT_HEX = re.compile(r"[g-z]")
_BASE32 = re.compile(r"[a-z2-7]+")
_TRANSITION = re.compile(r"[a-z]\d|\d[a-z]")
_DIGEST_PREFIX = re.compile(r"(?:\bh1:|\bsha(?:256|384|512)[-:]|;base64,)$", re.I)
_DIGEST_TOKEN = re.compile(r"^sha(?:256|384|512)-", re.I)
# Base64 that is public by design: a data URI's image, an armoured public
# key or signature (PGP, PEM, SSH2), an OpenSSH public key line.
_PUBLIC_BASE64 = re.compile(
    r"data:[\w.+-]+/[\w.+-]+;base64,[A-Za-z0-9+/=\s]+"
    r"|-----BEGIN ((?:[A-Z0-9]+ )*(?:PUBLIC KEY(?: BLOCK)?|SIGNATURE))-----[\s\S]*?-----END \1-----"
    r"|---- BEGIN SSH2 PUBLIC KEY ----[\s\S]*?---- END SSH2 PUBLIC KEY ----"
    r"|\b(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-nistp\d+|sk-[\w.-]+@openssh\.com)[^\S\n]+AAAA[A-Za-z0-9+/]+=*"
)
_PUBLIC_MARKS = ("data:", "-----BEGIN", "---- BEGIN", "AAAA")


def is_digest(text: str, start: int, token: str) -> bool:
    """A content digest that is base64 by design (go.sum, SRI), not a secret."""
    return bool(
        _DIGEST_PREFIX.search(text[max(0, start - 8) : start]) or _DIGEST_TOKEN.match(token)
    )


def shannon_bits_per_char(text: str) -> float:
    counts = Counter(text)
    total = len(text)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


def _looks_random_base36(token: str) -> bool:
    if any(c.isupper() for c in token):
        return False
    return any(
        not _BASE32.fullmatch(run)
        and len(_NOT_HEX.findall(run)) >= 4
        and len(_TRANSITION.findall(run)) >= 6
        and shannon_bits_per_char(run) >= MIN_BASE36_BITS_PER_CHAR
        for run in _BASE36_RUN.findall(token)
    )


def _looks_random(token: str) -> bool:
    if _looks_random_base36(token):
        return True
    return (
        len(token) >= MIN_LENGTH
        and any(c.isupper() for c in token)
        and any(c.islower() for c in token)
        and any(c.isdigit() for c in token)
        and shannon_bits_per_char(token) >= MIN_BITS_PER_CHAR
    )


def _candidates(text: str) -> tuple[str, list[tuple[int, int]]]:
    """The text with public base64 blanked, and its candidate runs.

    Without any the candidates are the prefilter's token runs that are
    long enough (the same characters), so the text is not searched again.
    """
    masked = text
    if any(mark in text for mark in _PUBLIC_MARKS):
        masked = _PUBLIC_BASE64.sub(lambda m: " " * len(m.group()), text)
    if masked == text:
        runs = prefilter.scan(text).token_runs
        return text, [(start, end) for start, end in runs if end - start >= MIN_CANDIDATE_LENGTH]
    return masked, [match.span() for match in _CANDIDATE.finditer(masked)]


def _high_entropy_spans(text: str) -> list[Span]:
    masked, candidates = _candidates(text)
    spans = []
    for start, end in candidates:
        token = masked[start:end]
        if is_digest(masked, start, token) or looks_like_path(token) or is_placeholder(token):
            continue
        if _looks_random(token.strip("=")):
            spans.append(Span("high_entropy_string", start, end))
    return spans


DETECTORS = [Detector("entropy", _high_entropy_spans)]
