"""Text normalisation that closes the usual dodges before matching.

NFKC folds full-width and compatibility forms (a full-width "ghp_" becomes
the ASCII one); zero-width characters and bidi controls are removed so
"ign\u200bore previous instructions" or a reversed token cannot slip past
a pattern; and Cyrillic and Greek letters that look like Latin ones are
folded to them ("ignore" spelt with a Cyrillic i, o and e reads as
"ignore"). The
folding maps one character to one, so spans stay where they were.
"""

import re
import unicodedata

_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
    "\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]"
)
# Look-alikes from the Unicode confusables list that NFKC leaves alone.
_CONFUSABLES = str.maketrans(
    "аеорсухіјѕԁԛԝһӏАВЕКМНОРСТХІЈЅ"  # noqa: RUF001 (Cyrillic look-alikes)
    "αοκνρτυχιΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
    "aeopcyxijsdqwhlABEKMHOPCTXIJSaokvptuxiABEZHIKMNOPTYX",
)


def normalize(text: str) -> str:
    return _INVISIBLE.sub("", unicodedata.normalize("NFKC", text)).translate(_CONFUSABLES)
