"""The time a question names, for time-aware retrieval."""

from datetime import UTC, datetime, timedelta

import pytest

from memory_app.selectors.timeframe import time_window

NOW = datetime(2026, 11, 24, 12, tzinfo=UTC)


def days_ago(n: float) -> datetime:
    return NOW - timedelta(days=n)


@pytest.mark.parametrize(
    ("question", "inside", "outside"),
    [
        ("What did we change on payments yesterday?", [1], [4, 10]),
        ("What did we change on payments last week?", [9, 11], [1, 20]),
        ("What did we change on payments last month?", [38, 52], [10, 90]),
        ("what broke 3 days ago", [3], [1, 10]),
    ],
)
def test_relative_phrases_name_a_span_of_days(question, inside, outside):
    window = time_window(question, NOW)
    assert all(window.contains(days_ago(n)) for n in inside)
    assert not any(window.contains(days_ago(n)) for n in outside)


@pytest.mark.parametrize(
    "question", ["On May 2nd, which movie did I watch?", "what did I say on 2 May", "may 2: notes?"]
)
def test_a_calendar_day_matches_in_any_year(question):
    window = time_window(question, NOW)
    assert window.contains(datetime(2023, 5, 2, 9, tzinfo=UTC))
    assert not window.contains(datetime(2023, 5, 3, 9, tzinfo=UTC))


@pytest.mark.parametrize(
    "question",
    ["how do we rotate the vault key", "May I restart the pods?", "day 40 of the outage"],
)
def test_a_question_without_a_time_has_no_window(question):
    assert time_window(question, NOW) is None
