"""The context's token count, added up from its parts, is the count of its text
(selectors/context.py, `_assembled_tokens`)."""

from hypothesis import given, settings
from hypothesis import strategies as st

from memory_app import tokens
from memory_app.actors import Actor
from memory_app.models import DocState, MemoryDocument, MemoryStore, Scope, Trust
from memory_app.selectors.context import (
    TRUNCATION_MARK,
    Entry,
    _assemble,
    _assembled_tokens,
    render_entry,
)
from memory_app.tokens import count_tokens

STORE = MemoryStore(id=1, slug="workspace_runbooks", scope=Scope.WORKSPACE)
# Text of every kind: line breaks and spaces at the edges, markup the
# rendering escapes, punctuation, other scripts, emoji.
TEXT = st.text(
    alphabet=st.one_of(
        st.sampled_from(list(" \n\r\t<>&\"'.,;:!?-_/#*`~()[]{}|\\…")),
        st.characters(codec="utf-8", exclude_categories=("Cs",)),
    ),
    max_size=300,
)
PART = st.tuples(
    TEXT,
    TEXT,
    st.sampled_from(["always", "trusted", "untrusted"]),
    st.sampled_from([Trust.ADMIN_APPROVED, Trust.AGENT_DRAFT]),
    st.booleans(),
    st.booleans(),
)


def _entry(number: int, title: str, content: str, block: str, trust, constrained, cut) -> Entry:
    document = MemoryDocument(
        id=f"00000000-0000-0000-0000-{number:012d}",
        store_id=STORE.pk,
        path=f"notes/{number}",
        title=title,
        content=content,
        doc_type="note",
        trust=trust,
        state=DocState.CONSTRAINED if constrained else DocState.ACTIVE,
        version=number + 1,
    )
    document.store = STORE
    entry = Entry(document, block, 0.5, {})
    body = content + TRUNCATION_MARK if cut else content
    entry.text = render_entry(document, Actor(user=None, agent=None), block, body)
    entry.tokens = count_tokens(entry.text)
    return entry


@settings(max_examples=300, deadline=None)
@given(st.lists(PART, max_size=6))
def test_the_parts_add_up_to_the_whole(parts):
    entries = [_entry(number, *part) for number, part in enumerate(parts)]
    text = _assemble(entries)
    assert _assembled_tokens(entries) == (count_tokens(text) if text else 0)


def test_a_remembered_count_is_the_count_and_the_oldest_are_let_go(monkeypatch):
    """Counts are kept by a digest of the text, as many as COUNTS_KEPT."""
    monkeypatch.setattr(tokens, "COUNTS_KEPT", 3)
    monkeypatch.setattr(tokens, "_counts", {})
    texts = [f"memory number {n} " * (n + 1) for n in range(5)]
    first = [count_tokens(text) for text in texts]
    again = [count_tokens(text) for text in texts]
    encoding = tokens._encoding()
    assert first == again == [len(encoding.encode(text)) for text in texts]
    assert len(tokens._counts) == 3
    changed = texts[1] + "and a few more words"
    assert count_tokens(changed) == len(encoding.encode(changed)) != first[1]
