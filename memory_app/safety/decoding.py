"""One level of decoding, so an encoded payload is scanned as what it says.

A token or an "ignore previous instructions" wrapped in base64, hex or
percent-encoding passes every pattern untouched. Runs that decode to
readable text are decoded once and handed back to the detectors; a hit
inside is reported on the span of the encoded run. Binary payloads
(images, digests, ciphertext) do not decode to text and are left alone.
One level only: nesting deeper costs time on every write for attacks
nobody has shown us.
"""

import base64
import binascii
import re
from dataclasses import dataclass
from urllib.parse import unquote

from memory_app.safety import prefilter

_BASE64 = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}={0,2}(?![A-Za-z0-9+/=_-])")
# The look-ahead names what a run must start with, so a failing position
# fails at once.
_HEX = re.compile(r"(?=[0-9A-Fa-f]{16})(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}){8,}(?![0-9A-Fa-f])")
# Opens with its literal "%", which the regex engine skips to in one fast
# loop (a pattern opening with a group or look-ahead is tried everywhere).
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}[^\s%]*(?:%[0-9A-Fa-f]{2}[^\s%]*)*")
# What readable text may not hold (controls, DEL, C1, beyond the BMP);
# counted rather than the readable characters, which are nearly all.
_UNREADABLE = re.compile(r"[^\t\n\r\x20-\x7e\u00a0-\uffff]")
MIN_DECODED_CHARS = 8


@dataclass(frozen=True)
class Decoded:
    start: int  # span of the encoded run in the scanned text
    end: int
    text: str


def _readable(data: bytes) -> str | None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if len(text) < MIN_DECODED_CHARS:
        return None
    readable = len(text) - len(_UNREADABLE.findall(text))
    return text if readable >= 0.95 * len(text) else None


def _from_base64(run: str) -> bytes | None:
    if run.lower() == run or run.upper() == run:
        return None  # identifiers and words (one case only) are not base64 payloads
    padded = run + "=" * (-len(run) % 4)
    try:
        return base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        return None


def decoded_runs(text: str) -> list[Decoded]:
    """The encoded runs of `text` that decode to readable text.

    A base64 or hex run lies inside a run of token characters, which the
    prefilter has found already; the patterns run only there.
    """
    runs: list[Decoded] = []
    token_runs = prefilter.scan(text).token_runs
    for match in (m for span in token_runs for m in _BASE64.finditer(text, *span)):
        data = _from_base64(match.group())
        if data and (decoded := _readable(data)):
            runs.append(Decoded(match.start(), match.end(), decoded))
    for match in (m for span in token_runs for m in _HEX.finditer(text, *span)):
        if decoded := _readable(bytes.fromhex(match.group())):
            runs.append(Decoded(match.start(), match.end(), decoded))
    if "%" not in text:
        return runs
    for match in _PERCENT.finditer(text):
        # The run is the whole word around the escapes: in
        # "ignore%20the%20rules" the first word has no escape before it.
        start = match.start()
        while start and not text[start - 1].isspace():
            start -= 1
        encoded = text[start : match.end()]
        decoded = unquote(encoded)
        if decoded != encoded and len(decoded) >= MIN_DECODED_CHARS:
            runs.append(Decoded(start, match.end(), decoded))
    return runs
