"""Titles derived from content when the writer leaves the title empty."""

import pytest

from memory_app.actors import Actor
from memory_app.paths import DIGEST_LENGTH, path_error, path_from_title
from memory_app.services.conversations import conversation_open
from memory_app.services.remember import RememberInput, memory_remember
from memory_app.services.titles import title_from_content


@pytest.mark.parametrize(
    ("content", "title"),
    [
        ("# Kafka consumer lag\nScale the group.", "Kafka consumer lag"),
        ("### Deploys ###\nFreeze on Fridays.", "Deploys"),
        ("\n\n  #\n## Real title\nbody", "Real title"),
        ("#ledger-oncall owns close issues.", "#ledger-oncall owns close issues."),
        ("C# builds   need   dotnet 8", "C# builds need dotnet 8"),
        ("", "untitled"),
        ("   \n#\n", "untitled"),
    ],
)
def test_a_title_is_the_first_line_without_heading_marks(content, title):
    assert title_from_content(content) == title


def test_a_long_first_line_is_cut_at_a_word_boundary():
    line = "Restart the payments worker after rotating credentials " * 4
    title = title_from_content(line, limit=40)
    assert title == "Restart the payments worker after…"
    assert len(title) <= 40


def test_a_cut_that_falls_on_a_space_keeps_the_whole_last_word():
    assert title_from_content("alpha beta gamma delta", limit=11) == "alpha beta…"


def test_one_endless_word_is_cut_hard():
    assert title_from_content("x" * 300, limit=20) == "x" * 19 + "…"


@pytest.mark.django_db
def test_an_agent_write_without_a_title_gets_the_derived_one(owner):
    conversation = conversation_open(user=owner, external_id="titles")
    actor = Actor(user=owner, agent=owner, conversation=conversation)
    data = RememberInput(store="conversation", content="## Pager duty\nCall the on-call owner.")
    result = memory_remember(actor=actor, data=data)
    assert (result.document.title, result.document.path) == ("Pager duty", "pager-duty")


@pytest.mark.parametrize(
    ("title", "path"),
    [
        ("Nginx crash loop!", "nginx-crash-loop"),
        ("Café déjà vu", "cafe-deja-vu"),
        ("数据库连接池", "note-"),
        ("日本語のメモ", "note-"),
        ("🔥 on fire", "on-fire-"),
        ("Ünïcødé Straße", "unicde-strae-"),
        ("!!!", "note-"),
    ],
)
def test_a_derived_path_keeps_what_it_can_and_a_digest_of_what_it_cannot(title, path):
    derived = path_from_title(title)
    assert derived.startswith(path)
    assert path_error(derived) is None
    assert derived == path_from_title(title)
    if path.endswith("-"):
        assert len(derived) == len(path) + DIGEST_LENGTH


def test_titles_a_path_cannot_spell_are_different_documents(owner):
    conversation = conversation_open(user=owner, external_id="scripts")
    actor = Actor(user=owner, agent=owner, conversation=conversation)
    written = [
        memory_remember(actor=actor, data=RememberInput(store="conversation", **fields))
        for fields in (
            {"content": "数据库连接池在批处理导入时耗尽。"},
            {"title": "日本語のメモ", "content": "Kafka のラグは消費者を増やして解消する。"},
            {"title": "🔥", "content": "The on-call pager fires at 3 a.m."},
        )
    ]
    assert [result.outcome for result in written] == ["created"] * 3
    assert len({result.document.path for result in written}) == 3
    again = memory_remember(
        actor=actor,
        data=RememberInput(store="conversation", title="日本語のメモ", content="Kafka の手順。"),
    )
    assert (again.outcome, again.document.pk) == ("updated", written[1].document.pk)
