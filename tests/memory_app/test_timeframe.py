"""The time a question names, for time-aware retrieval."""

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone

from memory_app.selectors.timeframe import time_window

# A Tuesday.
NOW = datetime(2026, 11, 24, 12, tzinfo=UTC)
# A Friday, holding memories from today, Sunday 29 November (5.4 days
# back), Wednesday 25 November (9 days) and 25 October (40 days).
FRIDAY = datetime(2026, 12, 4, 12, tzinfo=UTC)
HELD = {"today": 0, "sunday": 5.4, "nov 25": 9, "oct 25": 40}


def days_ago(n: float, now: datetime = NOW) -> datetime:
    return now - timedelta(days=n)


@pytest.mark.parametrize(
    ("question", "inside", "outside"),
    [
        ("What did we change on payments yesterday?", [1], [0, 2, 4, 10]),
        ("What broke the day before yesterday?", [2], [1, 3]),
        ("What did we change on payments last week?", [2, 5, 8, 9.4], [1, 0.5, 11, 20]),
        ("What did we change on payments last month?", [25, 38, 52], [23, 10, 60, 90]),
        ("what did we ship last year", [340, 600], [300, 700]),
        ("what broke 3 days ago", [3], [1, 10]),
        ("what broke a couple of weeks ago", [14, 21], [3, 40]),
        ("anything new this week?", [0, 1, 2], [3, 8]),
        ("what did we decide this month", [0, 20, 23], [25, 40]),
        ("what did we change this morning", [0.2], [0.6, 1]),
        ("what did we change recently", [0, 6], [9]),
        ("what changed in the last 24 hours", [0.5, 0.9], [1.1]),
        ("what changed in the past couple of days", [0.5, 2.4], [4.6]),
        ("what changed over the last few days", [1, 5], [7]),
        ("what changed in the last 3 weeks", [1, 20], [23]),
        ("what changed the past week", [0, 6], [8]),
        ("what changed in the previous two months", [0, 60], [64]),
    ],
)
def test_relative_phrases_name_a_span_of_time(question, inside, outside):
    window = time_window(question, NOW)
    assert all(window.contains(days_ago(n)) for n in inside), window
    assert not any(window.contains(days_ago(n)) for n in outside), window


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # The previous calendar month: November, asked in December.
        ("what did we change last month", {"sunday", "nov 25"}),
        # Counted back in calendar days from now.
        ("what did we change in the last 7 days", {"today", "sunday"}),
        ("what did we change in the past 7 days", {"today", "sunday"}),
        ("what did we change over the past seven days", {"today", "sunday"}),
        # The previous calendar week, its Sunday included, asked on a Friday.
        ("what did we change last week", {"sunday", "nov 25"}),
        ("what did we change the previous week", {"sunday", "nov 25"}),
        ("what did we change this week", {"today", "sunday"}),
        ("what did we change on Sunday", {"sunday"}),
        ("what did we change last Wednesday", set()),
        ("what did we change on Wednesday the 25th of November", {"nov 25"}),
        ("what did we change on 2026-10-25", {"oct 25"}),
        ("what did we change since last month", {"today", "sunday", "nov 25"}),
    ],
)
def test_a_friday_s_questions_find_the_memories_of_their_time(question, expected):
    window = time_window(question, FRIDAY)
    found = {name for name, age in HELD.items() if window.contains(days_ago(age, FRIDAY))}
    assert found == expected, window


@pytest.mark.parametrize(
    ("weekday", "back"),
    [("Monday", 4), ("Thursday", 1), ("Friday", 7), ("Saturday", 6)],
)
def test_a_weekday_is_the_latest_one_before_today(weekday, back):
    for phrase in (f"on {weekday}", f"last {weekday}"):
        window = time_window(f"what did we change {phrase}?", FRIDAY)
        day = (FRIDAY - timedelta(days=back)).replace(hour=0)
        assert window.start == day and window.end == day + timedelta(days=1)


def test_a_calendar_period_follows_the_current_time_zone():
    """Asked at 23:00 on Monday 30 November in Los Angeles (07:00 Tuesday
    in UTC), "yesterday" is Sunday there, "this week" began on Sunday 29th
    and "last month" is October."""
    asked = datetime(2026, 12, 1, 7, tzinfo=UTC)
    with timezone.override(ZoneInfo("America/Los_Angeles")):
        yesterday = time_window("what broke yesterday", asked)
        last_month = time_window("what broke last month", asked)
        this_week = time_window("what broke this week", asked)
    sunday_morning = datetime(2026, 11, 29, 18, tzinfo=UTC)  # 10:00 there
    assert yesterday.contains(sunday_morning)
    assert not yesterday.contains(datetime(2026, 11, 30, 18, tzinfo=UTC))
    assert last_month.contains(datetime(2026, 11, 1, 5, tzinfo=UTC))  # still 31 October there
    assert not last_month.contains(datetime(2026, 11, 1, 9, tzinfo=UTC))
    assert this_week.contains(sunday_morning)


def test_the_first_mention_wins():
    window = time_window("was it yesterday or last month that we changed it?", NOW)
    assert window.contains(days_ago(1)) and not window.contains(days_ago(40))
    window = time_window("what did we change last month, not yesterday", NOW)
    assert window.contains(days_ago(40)) and not window.contains(days_ago(1))


@pytest.mark.parametrize(
    "question", ["On May 2nd, which movie did I watch?", "what did I say on 2 May", "may 2: notes?"]
)
def test_a_calendar_day_matches_in_any_year(question):
    window = time_window(question, NOW)
    assert window.contains(datetime(2023, 5, 2, 9, tzinfo=UTC))
    assert not window.contains(datetime(2023, 5, 3, 9, tzinfo=UTC))


def test_a_calendar_day_with_its_year_matches_that_year_only():
    window = time_window("what did we decide on May 2nd, 2025?", NOW)
    assert window.contains(datetime(2025, 5, 2, 9, tzinfo=UTC))
    assert not window.contains(datetime(2024, 5, 2, 9, tzinfo=UTC))


@pytest.mark.parametrize(
    "question",
    [
        "how do we rotate the vault key",
        "May I restart the pods?",
        "day 40 of the outage",
        "what did we do about it last time?",
        "what happens on the last day of the sprint",
        "the last 3 deploys failed",
    ],
)
def test_a_question_without_a_time_has_no_window(question):
    assert time_window(question, NOW) is None


@pytest.mark.parametrize(
    "question",
    [
        "what is the last week of the quarter freeze policy",
        "roll back the last month of migrations",
        "export the past month of data",
        "what happened in the last 3 days of the sprint",
        "archive the previous year of invoices",
        "grep the last 24 hours of logs for 502s",
        "what happens on the last day of the sprint",
    ],
)
def test_a_span_followed_by_of_is_a_part_of_something_not_a_time(question):
    assert time_window(question, NOW) is None


def test_a_span_read_as_a_part_leaves_a_later_time_to_be_found():
    window = time_window("we rolled back the last month of migrations yesterday", NOW)
    assert window.contains(days_ago(1)) and not window.contains(days_ago(10))


@pytest.mark.parametrize(
    "question",
    [
        "which cron jobs run on Monday?",
        "is the freeze on Friday",
        "what happens on Thursday after the release train",
        "what will we release on Friday?",
        "What is scheduled on Monday?",
        "what\u2019s due on Monday",
        "which backups run on Mondays",
        "what happens every Monday",
        "what do we deploy next Monday",
        "what ships this coming Friday",
    ],
)
def test_a_weekday_to_come_or_that_recurs_is_no_past_day(question):
    assert time_window(question, FRIDAY) is None


@pytest.mark.parametrize(
    ("question", "back"),
    [
        ("what did we deploy on Monday", 4),
        ("what changed on Tuesday", 3),
        ("which jobs ran on Thursday", 1),
        ("the incident on Friday", 7),
        ("what is the root cause of the outage on Friday", 7),
        ("is there a postmortem for the outage on Monday?", 4),
        ("can you list the deploys on Monday", 4),
        ("it runs nightly, but what failed on Tuesday?", 3),
    ],
)
def test_a_weekday_asked_about_in_the_past_is_the_latest_one(question, back):
    window = time_window(question, FRIDAY)
    day = (FRIDAY - timedelta(days=back)).replace(hour=0)
    assert (window.start, window.end) == (day, day + timedelta(days=1))


@pytest.mark.parametrize(
    "question",
    [
        "Step 3 may fail when the cache is cold",
        "Why may 2 replicas be down?",
        "The job is slow. May 3 workers share one queue?",
        "retries may 5 times exceed the budget",
    ],
)
def test_the_verb_may_next_to_a_number_is_no_date(question):
    assert time_window(question, NOW) is None


@pytest.mark.parametrize(
    ("question", "year"),
    [
        ("what did we decide on may 2nd", None),
        ("what did we change on may 2", None),
        ("notes from the May 2 release", None),
        ("the 2nd of may retro", None),
        ("what broke on 2 may?", None),
        ("May 2, 2025: what did we ship", 2025),
        ("what did we ship 2 May 2025", 2025),
    ],
)
def test_may_marked_as_a_date_is_the_month(question, year):
    window = time_window(question, NOW)
    assert window.contains(datetime(year or 2023, 5, 2, 9, tzinfo=UTC))
    assert not window.contains(datetime(year or 2023, 5, 3, 9, tzinfo=UTC))
