"""The engine runs with its own configuration: vendor rules on, its password rule off.

Password assignments are ours (secrets.py); these tests hold that a long
note with one in it is still refused, that the engine's vendor rules still
fire through the configuration, and that the engine no longer reports the
password itself. Values are generated at run time; the text around them
is ours.
"""

import random
import string
from concurrent.futures import ThreadPoolExecutor

import betterleaks
import pytest

from memory_app.safety import engine, scan_fields

_RNG = random.Random(20261125)
_ALNUM = string.ascii_letters + string.digits


def generated(length: int) -> str:
    return "".join(_RNG.choice(_ALNUM) for _ in range(length - 2)) + "q7"


def long_note(size: int = 19_000) -> str:
    """Runbook prose, different paragraph to paragraph, about `size` characters."""
    paragraphs, day = [], 0
    while sum(len(p) + 2 for p in paragraphs) < size:
        day += 1
        paragraphs.append(
            f"Day {day}: the ledger service settled batch {8800 + day} in {day * 3} ms. "
            f"Retries stayed under {day % 4 + 1} per capture, the on-call user was not "
            "paged, and the login page answered within budget. Next step: rotate the "
            "replica that lagged and check the connection pool before the weekly report."
        )
    return "\n\n".join(paragraphs)


def detectors(text: str) -> set[str]:
    findings = scan_fields({"content": text}, conversation_store=False)
    return {f.detector for f in findings if f.blocking}


@pytest.mark.parametrize(
    "line",
    [
        'db_password = "{}"',
        "PGPASSWORD={}",
        "  password: '{}'",
        'smtp.login(sender, "{}")',
    ],
)
def test_a_password_assignment_inside_long_prose_is_still_refused(line):
    note = long_note()
    middle = note.find("\n", len(note) // 2)
    text = f"{note[:middle]}\n{line.format(generated(14))}\n{note[middle:]}"
    assert detectors(note) == set()
    assert detectors(text) & {"password_assignment", "credential_call"}


@pytest.mark.parametrize(
    ("token", "detector"),
    [
        ("ghp_" + generated(36), "github_token"),
        ("glpat-" + generated(20), "gitlab_token"),
    ],
)
def test_the_engines_vendor_rules_still_fire_with_its_configuration(token, detector):
    note = long_note(5_000)
    assert detector in detectors(f"{note}\nCI_TOKEN={token}\n{note}")


def test_the_engine_leaves_password_assignments_to_our_rules():
    text = f'host = "db.internal"\nuser = "ledger"\npassword = "{generated(14)}"\n'
    rules = {finding.rule_id for finding in betterleaks.scan_string(text)}
    configured = {f.rule_id for f in betterleaks.scan_string(text, config_path=engine.CONFIG)}
    assert "generic-password" in rules
    assert "generic-password" not in configured
    assert detectors(text) == {"password_assignment"}


def test_an_engine_error_reaches_the_caller(monkeypatch):
    def failing(text):
        raise betterleaks.BetterleaksError("engine down")

    monkeypatch.setattr(engine, "_findings", failing)
    with pytest.raises(betterleaks.BetterleaksError, match="engine down"):
        scan_fields({"content": long_note(2_000)}, conversation_store=False)


def test_scans_from_several_threads_find_what_one_scan_finds():
    def scan(note: str) -> list:
        return scan_fields({"a": note, "b": note[::-1]}, conversation_store=False)

    notes = [
        f"{long_note(3_000 + 500 * i)}\nCI_TOKEN=ghp_{generated(36)}\npassword = '{generated(14)}'"
        for i in range(8)
    ]
    one_by_one = [scan(note) for note in notes]
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(scan, notes))
    assert together == one_by_one
    expected = {"github_token", "password_assignment"}
    assert all(expected <= {f.detector for f in found} for found in together)
