"""What two memories claim, as far as figures and negation can tell.

Figures are standalone numbers ("pool size 50", "02:00", "20%", "90-day");
numbers inside identifiers (INC-4411, v2, node-7) name things rather than
state values, and two notes about different incidents may well say the same.
"""

import re

_FIGURE = re.compile(r"(?<![\w-])\d+(?:[.,:]\d+)*(?!\w)(?!-\d)")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_NEGATION = re.compile(r"\b(?:not|never|no longer|don't|do not|must not|avoid|stop)\b", re.I)


def figures(text: str) -> set[str]:
    """The text's figures, thousands separators dropped ("1,000" is 1000)."""
    return set(_FIGURE.findall(without_thousands(text)))


def without_thousands(text: str) -> str:
    """`text` with the commas that group a number's thousands taken out."""
    return _THOUSANDS.sub("", text)


def negated(text: str) -> bool:
    return bool(_NEGATION.search(text))


def conflicting_figures(a: str, b: str) -> bool:
    """Each states a figure the other lacks (one merely leaving a figure out is fine)."""
    left, right = figures(a), figures(b)
    return bool(left - right) and bool(right - left)
