"""Text normalisation that closes the usual dodges before matching.

NFKC folds full-width and compatibility forms (a full-width "ghp_" becomes
the ASCII one); zero-width characters and bidi controls are removed so
"ign\u200bore previous instructions" or a reversed token cannot slip past
a pattern; and Cyrillic and Greek letters that look like Latin ones are
folded to them ("ignore" spelt with a Cyrillic i, o and e reads as
"ignore"). The
folding maps one character to one, so spans stay where they were.

All three only ever change characters outside ASCII, so ASCII text (most
writes) is returned as it is, and each step runs only on text that holds
something for it to change: `str.translate` alone costs milliseconds on a
long text with a few emoji or box-drawing characters in it.
"""

import re
import unicodedata

_INVISIBLE_CHARS = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
    "\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0"
)
_INVISIBLE = re.compile(f"[{_INVISIBLE_CHARS}]")
# Look-alikes from the Unicode confusables list that NFKC leaves alone.
_CONFUSABLES = str.maketrans(
    "аеорсухіјѕԁԛԝһӏАВЕКМНОРСТХІЈЅ"  # noqa: RUF001 (Cyrillic look-alikes)
    "αοκνρτυχιΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
    "aeopcyxijsdqwhlABEKMHOPCTXIJSaokvptuxiABEZHIKMNOPTYX",
)
_CONFUSABLE_CHARS = "".join(map(chr, _CONFUSABLES))
_CONFUSABLE = re.compile(f"[{_CONFUSABLE_CHARS}]")
# Either kind: one search finds most texts hold neither.
_INVISIBLE_OR_CONFUSABLE = re.compile(f"[{_INVISIBLE_CHARS}{_CONFUSABLE_CHARS}]")


def normalize(text: str) -> str:
    if text.isascii():
        return text
    if not unicodedata.is_normalized("NFKC", text):
        text = unicodedata.normalize("NFKC", text)
    if not _INVISIBLE_OR_CONFUSABLE.search(text):
        return text
    if _INVISIBLE.search(text):
        text = _INVISIBLE.sub("", text)
    if _CONFUSABLE.search(text):
        text = text.translate(_CONFUSABLES)
    return text
