"""The time a question asks about: "yesterday", "last week", "on May 2nd".

A question about time is answered by the memories written then, which
neither the words nor the meaning of the question can find: "what did we
change last week" is equally close to every change note. The window found
here lets retrieval fetch the memories of that time as candidates and
favour them in ranking (DESIGN §4, decisions: time-aware retrieval).
"""

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
_MONTH_DAY = re.compile(rf"\b({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b", re.IGNORECASE)
_DAY_MONTH = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH})\b", re.IGNORECASE)
_AGO = re.compile(r"\b(\d{1,3}|a|one|two|three)\s+(day|week|month)s?\s+ago\b", re.IGNORECASE)
_COUNT = {"a": 1, "one": 1, "two": 2, "three": 3}
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30}
# Relative phrases → (youngest, oldest) age in days. Generous at the edges:
# "last week" said on a Monday reaches back almost two weeks.
RELATIVE = [
    (re.compile(r"\b(today|this morning|earlier today)\b", re.I), (0, 1)),
    (re.compile(r"\byesterday\b", re.I), (0, 2)),
    (re.compile(r"\b(this week|past week|last few days|recently)\b", re.I), (0, 7)),
    (re.compile(r"\blast week\b", re.I), (6, 15)),
    (re.compile(r"\b(this month|past month)\b", re.I), (0, 31)),
    (re.compile(r"\blast month\b", re.I), (28, 62)),
]


@dataclass(frozen=True)
class Window:
    """Either a span of time (start, end) or a calendar day in any year."""

    start: datetime | None = None
    end: datetime | None = None
    month: int | None = None
    day: int | None = None

    def contains(self, moment: datetime) -> bool:
        if self.month is not None:
            return (moment.month, moment.day) == (self.month, self.day)
        return self.start <= moment <= self.end


def time_window(question: str, now: datetime) -> Window | None:
    """The window the question names, or None; the first mention wins."""
    if match := _MONTH_DAY.search(question):
        return _calendar_day(MONTHS[match.group(1).lower()], int(match.group(2)))
    if match := _DAY_MONTH.search(question):
        return _calendar_day(MONTHS[match.group(2).lower()], int(match.group(1)))
    if match := _AGO.search(question):
        count = _COUNT.get(match.group(1).lower()) or int(match.group(1))
        days = count * _UNIT_DAYS[match.group(2).lower()]
        margin = max(1, days // 4)
        return Window(now - timedelta(days=days + margin), now - timedelta(days=days - margin))
    for pattern, (youngest, oldest) in RELATIVE:
        if pattern.search(question):
            return Window(now - timedelta(days=oldest), now - timedelta(days=youngest))
    return None


def _calendar_day(month: int, day: int) -> Window | None:
    return Window(month=month, day=day) if 1 <= day <= 31 else None
