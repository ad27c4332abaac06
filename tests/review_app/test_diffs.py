"""Diffs as a reviewer reads them: numbered lines, changed words, new files, escaping."""

from review_app.diffs import CONTEXT, Segment, align, build_diff, word_segments

XSS = "<img src=x onerror=alert(1)><script>alert(2)</script>"


def test_a_changed_line_marks_only_the_changed_words():
    old, new = word_segments("retry 3 times, then page", "retry 5 times, then page")
    assert old == (
        Segment("retry ", False),
        Segment("3", True),
        Segment(" times, then page", False),
    )
    assert new == (
        Segment("retry ", False),
        Segment("5", True),
        Segment(" times, then page", False),
    )


def test_a_rewritten_line_marks_no_words_since_all_of_it_changed():
    old, new = word_segments("scale the consumer group", "ask the on-call owner first")
    assert old == (Segment("scale the consumer group", False),)
    assert new == (Segment("ask the on-call owner first", False),)


def test_split_rows_carry_line_numbers_of_both_sides():
    diff = build_diff("a\nb\nc", "a\nB\nc\nd")
    rows = [
        (r.kind, r.old and r.old.number, r.new and r.new.number, r.new and r.new.text)
        for r in diff.rows
    ]
    assert rows == [
        ("same", 1, 1, "a"),
        ("changed", 2, 2, "B"),
        ("same", 3, 3, "c"),
        ("added", None, 4, "d"),
    ]
    assert (diff.added, diff.removed, diff.is_new) == (2, 1, False)


def test_the_unified_view_lists_removed_lines_before_added_ones_with_a_sign():
    diff = build_diff("keep\nold one\nold two\nkeep too", "keep\nnew one\nkeep too")
    lines = [(line.sign, line.old, line.new, line.side.text) for line in diff.unified]
    assert lines == [
        ("", 1, 1, "keep"),
        ("-", 2, None, "old one"),
        ("-", 3, None, "old two"),
        ("+", None, 2, "new one"),
        ("", 4, 3, "keep too"),
    ]


def test_a_new_document_is_a_new_file_with_every_line_added():
    diff = build_diff(None, "first\nsecond")
    assert diff.is_new and (diff.added, diff.removed) == (2, 0)
    assert [(r.kind, r.old, r.new.number, r.new.text) for r in diff.rows] == [
        ("added", None, 1, "first"),
        ("added", None, 2, "second"),
    ]


def test_an_emptied_document_is_not_a_new_file():
    diff = build_diff("was here", "")
    assert not diff.is_new and [r.kind for r in diff.rows] == ["removed"]


def test_identical_versions_have_no_rows():
    diff = build_diff("same\ntext", "same\ntext")
    assert diff.unchanged and diff.rows == ()


def test_long_unchanged_runs_fold_around_the_change():
    old = "\n".join(f"line {n}" for n in range(1, 41))
    new = old.replace("line 20", "line twenty")
    diff = build_diff(old, new)
    kinds = [r.kind for r in diff.rows]
    assert kinds == ["fold", *["same"] * CONTEXT, "changed", *["same"] * CONTEXT, "fold"]
    assert [r.folded for r in diff.rows if r.kind == "fold"] == [19 - CONTEXT, 20 - CONTEXT]
    assert diff.rows[CONTEXT + 1].new.number == 20
    assert [line.folded for line in diff.unified if line.kind == "fold"] == [16, 17]


def test_hostile_text_comes_out_escaped_with_only_our_marks_as_tags():
    diff = build_diff(f"note {XSS}", f"notes {XSS}")
    old, new = str(diff.rows[0].old.html), str(diff.rows[0].new.html)
    assert "<script>" not in new and "<img" not in new
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in new
    assert old.startswith("<mark>note</mark>") and new.startswith("<mark>notes</mark>")
    added = str(build_diff(None, XSS).rows[0].new.html)
    assert added == ("&lt;img src=x onerror=alert(1)&gt;&lt;script&gt;alert(2)&lt;/script&gt;")


def test_every_table_body_escapes_the_content():
    changed = build_diff(f"a\n{XSS}\nz", f"a\n{XSS}!\nz\nnew {XSS}")
    bodies = [str(changed.unified_html), str(changed.split_html)]
    bodies.append(str(build_diff(None, XSS).new_file_html))
    for body in bodies:
        assert "<script>" not in body and "<img" not in body
        assert "&lt;script&gt;alert(2)&lt;/script&gt;" in body


def test_the_split_body_leaves_the_missing_half_of_an_added_line_blank():
    body = str(build_diff("a", "a\nb").split_html)
    assert body.endswith(
        '<tr class="added"><td class="num blank"></td><td class="sign blank"></td>'
        '<td class="code blank"></td><td class="num new">2</td><td class="sign new">+</td>'
        '<td class="code new">b</td></tr>'
    )


def test_a_step_inserted_at_the_top_leaves_the_others_paired_with_themselves():
    old = "1. Open the dashboard.\n2. Scale the group to 6.\n3. Page the owner."
    new = (
        "1. Check the alert is real.\n2. Open the dashboard.\n"
        "3. Scale the group to 12.\n4. Page the owner."
    )
    rows = [
        (r.kind, r.old and r.old.number, r.new and r.new.number) for r in build_diff(old, new).rows
    ]
    assert rows == [("added", None, 1), ("changed", 1, 2), ("changed", 2, 3), ("changed", 3, 4)]
    scaled = build_diff(old, new).rows[2]
    assert [s.text for s in scaled.new.segments if s.changed] == ["3", "12"]


def test_lines_without_a_partner_meet_again_as_rewrites():
    assert align(["alpha beta", "same line here"], ["gamma delta", "same line here!"]) == [
        (0, 0),
        (1, 1),
    ]
    assert align(["keep this line", "gone"], ["keep this line too"]) == [(0, 0), (1, None)]
