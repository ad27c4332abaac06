"""The time a question asks about: "yesterday", "last week", "on May 2nd".

A question about time is answered by the memories written then, which
neither the words nor the meaning of the question can find: "what did we
change last week" is equally close to every change note. The window found
here lets retrieval fetch the memories of that time as candidates and
favour them in ranking (DESIGN §4, decisions: time-aware retrieval).

Calendars are read in the current time zone: settings.TIME_ZONE, or the
zone a request activates (no user carries one of their own yet). How each
shape of phrase reads, asked at `now`:

* **A day**: "today", "this morning", "yesterday", "last night", "the day
  before yesterday", a weekday ("on Monday", "last Tuesday": the latest
  such day before today), a date with its year ("May 2nd, 2025",
  "2025-05-02"). A date without a year ("on May 2nd") is that day in any
  year, the way a conversation's sessions are remembered.
* **"On Monday" in the past only**: "last Monday" and "this past Monday"
  are past days, but "on Monday" also names a day to come or one that
  recurs. The nearest word before it in its clause that tells a tense
  decides: a past verb ("did", "was", "had", a word in -ed, "broke",
  "ran"…) reads the last Monday; a present or future one ("is", "are",
  "does", "will", "what's"), a verb of something that occurs on a
  schedule ("run", "happens", "starts"…) or a word of recurrence or of
  what is to come ("every", "each", "next", "upcoming") names no day. A
  topic word ("of", "about", "for", "from", "on") ends the search: in
  "is there a report for the outage on Friday" the day belongs to the
  outage. With no such word ("the incident on Friday") it is the past
  day, which is what a memory holds. "On Mondays", "every Monday", "next
  Monday" and "this coming Friday" never read as a day.
* **"May" the month, not the verb**: "may" before or after a number is the
  month only where something marks a date: it is written "May" inside a
  sentence, the day has its ordinal ("May 2nd"), a year follows, a
  preposition such as "on", "since" or "until" comes before it, or the date
  ends the clause ("may 2: notes?"). "Step 3 may fail" and "why may 2
  replicas be down" name no day.
* **The current or the previous calendar period**: "this week / month /
  year" from its start to now; "last" or "previous week / month / year" is
  the whole period before the current one and nothing of the current one,
  whose memories would crowd out those asked about. A week starts on
  Monday (ISO 8601) and also takes the Sunday before it, where weeks start
  on Sunday: one day too many costs less than a miss. "Last week" asked on
  Friday 4 December runs from Sunday 22 to the end of Sunday 29 November.
* **A count back from now**: "the last / past / previous N days | weeks |
  months | years", "the past week", "the last week" (not "last week"),
  "the last few days", "recently". A span followed by "of" is a part of
  something else, not a time counted from now: "the last week of the
  quarter", "the past month of data". Days are whole calendar days, so "the
  last 7 days" starts at midnight seven days ago; a month counts 31 days
  and a year 366, rather than miss the edge of one; hours count from now.
* **An age**: "3 days ago", "a couple of weeks ago": that age, give or take
  a quarter of it and at least a day.

A vague count reads wide: "a couple" is two or three, "a few" two to five,
"several" three to seven. "Since" before any of these runs from its start
to now. When a question names more than one time, the first mention wins.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from django.utils import timezone

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
WEEKDAYS = {
    name: number
    for number, name in enumerate(
        ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
    )
}
# A count in words or digits → the fewest and the most it may mean.
COUNTS = {
    "a": (1, 1),
    "an": (1, 1),
    "one": (1, 1),
    "two": (2, 2),
    "three": (3, 3),
    "four": (4, 4),
    "five": (5, 5),
    "six": (6, 6),
    "seven": (7, 7),
    "eight": (8, 8),
    "nine": (9, 9),
    "ten": (10, 10),
    "twelve": (12, 12),
    "couple": (2, 3),
    "few": (2, 5),
    "several": (3, 7),
}
UNITS = {"hour": timedelta(hours=1), "day": timedelta(days=1), "week": timedelta(days=7)}
# Counted back from now, a month or a year reaches its longest.
SPAN_UNITS = {**UNITS, "month": timedelta(days=31), "year": timedelta(days=366)}
AGE_UNITS = {**UNITS, "month": timedelta(days=30), "year": timedelta(days=365)}
# "recently", "lately": how far back they reach.
RECENT = timedelta(days=7)

_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
_WEEKDAY = "|".join(WEEKDAYS)
_COUNT = r"\d{1,3}|" + "|".join(sorted(COUNTS, key=len, reverse=True))
_UNIT = r"hour|day|week|month|year"
_YEAR = r"(?:,?\s+(\d{4}))?"

_MONTH_DAY = re.compile(rf"\b({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?{_YEAR}\b", re.I)
_DAY_MONTH = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH})\b{_YEAR}\b", re.I)
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_AGO = re.compile(
    rf"\b(?:an?\s+)?({_COUNT})(?:\s+of)?\s+({_UNIT})s?\s+ago\b",
    re.I,
)
_BACK = re.compile(
    rf"\b(the\s+)?(last|past|previous)\s+(?:(?:an?\s+)?({_COUNT})(?:\s+of)?\s+)?({_UNIT})s?\b"
    r"(?!\s+of\b)",
    re.I,
)
_THIS = re.compile(r"\bthis\s+(week|month|year)\b", re.I)
_TODAY = re.compile(
    r"\b(today|tonight|this\s+(?:morning|afternoon|evening)|earlier\s+today)\b", re.I
)
_YESTERDAY = re.compile(r"\b((?:the\s+)?day\s+before\s+)?yesterday\b", re.I)
_LAST_NIGHT = re.compile(r"\blast\s+night\b", re.I)
# A weekday followed by its date ("Wednesday, 25 November") leaves the date to say which.
_ON_WEEKDAY = re.compile(
    rf"\b(on|last|this\s+past|past)\s+({_WEEKDAY})\b(?!,?\s+(?:the\s+)?(?:\d|(?:{_MONTH})\b))",
    re.I,
)
# What says a tense or a schedule before "on <weekday>"; see the module docstring.
_PAST_WORD = re.compile(
    r"(?:did|was|were|had)(?:n't)?|broke|ran|went|came|made|took|got|saw|said|told|wrote|found|"
    r"built|sent|lost|left|began|brought|caught|fell|gave|held|knew|led|paid|rose|sold|spoke|"
    r"stood|thought|threw|froze|blew|"
    # a word in -ed, but not one in -eed ("need", "speed")
    r"\w{2,}(?<!e)ed"
)
_PRESENT_WORD = re.compile(
    r"(?:is|are|do|does)(?:n't)?|am|will|won't|shall|"
    r"(?:what|that|it|there|who|when|where|how|here)'s|\w+'(?:re|ll|m)|"
    r"runs?|happens?|occurs?|starts?|begins?|ends?|fires?|triggers?|executes?|recurs?|expires?|"
    r"due|scheduled|planned|every|each|next|coming|upcoming|"
    r"usually|always|typically|normally|regularly|weekly|tomorrow"
)
_TOPIC_WORD = re.compile(r"of|about|for|from|on|regarding")
_CLAUSE_START = re.compile(r"[.!?;:,\n]")
_WORD = re.compile(r"[\w'\u2019]+")
# What marks "may" next to a number as the month; see the module docstring.
_DATE_BEFORE = re.compile(r"\b(?:on|since|until|till|before|after|from|during|through)\s+$", re.I)
_CLAUSE_END = re.compile(r"\s*(?:[^\w\s]|$)")
# How far back the words before a date or a weekday are read: a clause is
# shorter, and a bounded look keeps a long message's many matches linear.
_LOOK_BACK = 200
_RECENTLY = re.compile(r"\b(recently|lately)\b", re.I)
_SINCE = re.compile(r"\bsince\s+$", re.I)


@dataclass(frozen=True)
class Window:
    """Either a span of time (start, end) or a calendar day in any year."""

    start: datetime | None = None
    end: datetime | None = None
    month: int | None = None
    day: int | None = None

    def contains(self, moment: datetime) -> bool:
        if self.month is not None:
            local = timezone.localtime(moment)
            return (local.month, local.day) == (self.month, self.day)
        return self.start <= moment <= self.end


def time_window(question: str, now: datetime) -> Window | None:
    """The window the question names, or None; the first mention wins."""
    now = timezone.localtime(now)
    lowered = question.lower()
    found = []
    for needles, pattern, read in _READERS:
        # A message may be long (memory_context takes 20,000 characters):
        # a pattern runs only where a word it needs occurs.
        if not any(needle in lowered for needle in needles):
            continue
        for match in pattern.finditer(question):
            window = read(match, now)
            if window is not None:
                found.append((match.start(), -len(match.group(0)), match, window))
                break
    if not found:
        return None
    _, _, match, window = min(found, key=lambda item: item[:2])
    if _SINCE.search(question[: match.start()]):
        return _since(window, now)
    return window


def _month_day(match: re.Match, now: datetime) -> Window | None:
    if not _is_month(match, 1):
        return None
    return _calendar_day(*match.groups(), now)


def _day_month(match: re.Match, now: datetime) -> Window | None:
    if not _is_month(match, 2):
        return None
    day, month, year = match.groups()
    return _calendar_day(month, day, year, now)


def _is_month(match: re.Match, group: int) -> bool:
    """Whether the month of a date match is one: "may" also is a verb ("step 3 may fail")."""
    if match.group(group).lower() != "may":
        return True
    text, start = match.string, match.start(group)
    before = text[max(0, start - _LOOK_BACK) : start].rstrip(" \t\"'(*_-")
    return bool(
        (match.group(group) == "May" and before and before[-1] not in ".!?\n")
        or match.group(3) is not None
        or re.search(r"\d(?:st|nd|rd|th)", match.group(0), re.I)
        or _DATE_BEFORE.search(text, max(0, match.start() - _LOOK_BACK), match.start())
        or _CLAUSE_END.match(text, match.end())
    )


def _calendar_day(month: str, day: str, year: str | None, now: datetime) -> Window | None:
    """That day of that year, or, without a year, that day in any year."""
    month_number, day_number = MONTHS[month.lower()], int(day)
    if year is None:
        return Window(month=month_number, day=day_number) if 1 <= day_number <= 31 else None
    try:
        return _days(date(int(year), month_number, day_number), 1, now)
    except ValueError:
        return None


def _iso_date(match: re.Match, now: datetime) -> Window | None:
    try:
        return _days(date(*(int(part) for part in match.groups())), 1, now)
    except ValueError:
        return None


def _ago(match: re.Match, now: datetime) -> Window:
    fewest, most = _count(match.group(1))
    unit = AGE_UNITS[match.group(2).lower()]
    margin = max(unit * fewest / 4, min(unit, timedelta(days=1)))
    return Window(now - unit * most - margin, now - unit * fewest + margin)


def _back(match: re.Match, now: datetime) -> Window | None:
    """Counted back ("the last 7 days", "the past week", "the last week"),
    or the previous calendar period ("last week", "the previous week")."""
    the, which, count, unit = match.groups()
    unit, which = unit.lower(), which.lower()
    if count is None and (which == "previous" or (which == "last" and the is None)):
        return _previous_period(unit, now)
    if count is None and unit == "day" and which != "past":
        # "The last day" is the final one of something ("on the last day we froze
        # the branch") more often than a span; "the past day" is one.
        return None
    most = _count(count)[1] if count is not None else 1
    if unit == "hour":
        return Window(now - SPAN_UNITS[unit] * most, now)
    back = now - SPAN_UNITS[unit] * most
    return Window(_midnight(back.date(), now), now)


def _this(match: re.Match, now: datetime) -> Window:
    return Window(_period_start(match.group(1).lower(), now.date(), now), now)


def _today(match: re.Match, now: datetime) -> Window:
    return Window(_midnight(now.date(), now), now)


def _yesterday(match: re.Match, now: datetime) -> Window:
    before = 2 if match.group(1) else 1
    return _days(now.date() - timedelta(days=before), 1, now)


def _last_night(match: re.Match, now: datetime) -> Window:
    """From yesterday's noon to this morning's: late work is dated either side of midnight."""
    today = _midnight(now.date(), now)
    return Window(today - timedelta(hours=12), min(now, today + timedelta(hours=12)))


def _on_weekday(match: re.Match, now: datetime) -> Window | None:
    """The latest such day before today: "on Tuesday" asked on a Tuesday is a week ago."""
    if match.group(1).lower() == "on" and not _asks_the_past(match.string, match.start()):
        return None
    back = (now.weekday() - WEEKDAYS[match.group(2).lower()] - 1) % 7 + 1
    return _days(now.date() - timedelta(days=back), 1, now)


def _asks_the_past(text: str, end: int) -> bool:
    """Whether the clause before `end` reads a following "on Monday" as a past day."""
    start = max(0, end - _LOOK_BACK)
    clause_start = max((m.end() for m in _CLAUSE_START.finditer(text, start, end)), default=start)
    for word in reversed(_WORD.findall(text, clause_start, end)):
        word = word.lower().replace("\u2019", "'")
        if _PRESENT_WORD.fullmatch(word):
            return False
        if _PAST_WORD.fullmatch(word):
            return True
        if _TOPIC_WORD.fullmatch(word):
            break
    return True


def _recently(match: re.Match, now: datetime) -> Window:
    return Window(_midnight((now - RECENT).date(), now), now)


def _previous_period(unit: str, now: datetime) -> Window | None:
    if unit not in ("week", "month", "year"):
        return None
    end = _period_start(unit, now.date(), now)
    if unit == "week":
        end += timedelta(days=1)  # the Sunday the week took belongs to the one before
        return Window(end - timedelta(days=8), end)
    return Window(_period_start(unit, (end - timedelta(days=1)).date(), now), end)


def _period_start(unit: str, day: date, now: datetime) -> datetime:
    """The start of the week (its Sunday before Monday), month or year holding `day`."""
    if unit == "week":
        start = day - timedelta(days=day.weekday() + 1)
    elif unit == "month":
        start = day.replace(day=1)
    else:
        start = day.replace(month=1, day=1)
    return _midnight(start, now)


def _days(first: date, count: int, now: datetime) -> Window:
    """Whole calendar days from `first`, no later than now."""
    start = _midnight(first, now)
    return Window(start, min(now, _midnight(first + timedelta(days=count), now)))


def _midnight(day: date, now: datetime) -> datetime:
    return datetime.combine(day, time(), tzinfo=now.tzinfo)


def _since(window: Window, now: datetime) -> Window:
    """From the start of the named time to now; a day without a year is its latest past one."""
    if window.month is None:
        return Window(window.start, now)
    # A 29 February can be eight years back (2096 before 2104).
    for year in range(now.year, now.year - 9, -1):
        try:
            day = date(year, window.month, window.day)
        except ValueError:  # 29 February, or a day the month lacks
            continue
        if day <= now.date():
            return Window(_midnight(day, now), now)
    return window


def _count(word: str) -> tuple[int, int]:
    if word.isdigit():
        return int(word), int(word)
    return COUNTS[word.lower()]


_DIGITS = tuple("0123456789")
# Each pattern with the words (any of them) it cannot match without.
_READERS: list[
    tuple[tuple[str, ...], re.Pattern, Callable[[re.Match, datetime], Window | None]]
] = [
    (_DIGITS, _MONTH_DAY, _month_day),
    (_DIGITS, _DAY_MONTH, _day_month),
    (("-",), _ISO_DATE, _iso_date),
    (("ago",), _AGO, _ago),
    (("last", "past", "previous"), _BACK, _back),
    (("this",), _THIS, _this),
    (("today", "tonight", "this"), _TODAY, _today),
    (("yesterday",), _YESTERDAY, _yesterday),
    (("night",), _LAST_NIGHT, _last_night),
    (("day",), _ON_WEEKDAY, _on_weekday),
    (("recently", "lately"), _RECENTLY, _recently),
]
