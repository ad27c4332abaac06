"""Recall and false-positive rate of the safety scanner, per kind and per source.

    .venv/bin/python benchmarks/scanner_eval.py [--corpora DIR] [--per-kind 16]

Two kinds of data are scored separately, because they answer different
questions:

* the public development sets (`secrets.jsonl`, `logs.jsonl`,
  `injection.jsonl` in DIR, by default the nearest `shared/corpora` above
  the repository): text we did not write, which says how the scanner holds on
  real data;
* the memories of the public retrieval set (`retrieval/memories.jsonl`,
  companion chat turns written as "User: …\nAssistant: …"): benign
  conversation from a source none of the detectors was written against,
  scored as negatives only, with the false-positive rate of every detector
  family, so that a family that blocks ordinary chat cannot hide there;
* the interface text of Django's message catalogues (`--only ui`: the
  English messages and their translations into some hundred languages, of
  six words or more, from the installed Django, BSD-3-Clause): sign-in and
  password help, form errors, admin notices, all benign, scored as
  negatives only. It is the kind of text an engineer pastes into a note,
  full of "your password" and "instructions", in every script;
* the descriptions of the installed Python distributions (`--only docs`:
  each package's README as its metadata carries it, cut into blocks of
  paragraphs of up to 2,000 characters; each package's own licence):
  engineering prose, install commands, configuration and code examples,
  connection strings with sample passwords, badges with tokens. Unlabelled
  and scored as negatives, so every block flagged is one to read: a few
  hold what the scanner should refuse (a sample JWT, an invite link);
* the docstrings of the Python standard library and of the installed
  packages (`--only docstrings`: modules, classes and functions, six
  words or more, tests and our own code left out; the PSF licence and
  each package's own): API prose whose verbs and nouns are an attack's
  too ("Send data to the server", "Ignore the flags", "print the text"),
  with grammar notation, parameter lists and sample logins. Unlabelled
  and scored as negatives, so every docstring flagged is one to read;
* our own corpus (tests/memory_app/safety/corpus.py), generated at run time,
  which says whether the intended cases are covered.

The injection classifier was trained on `injection.jsonl`, part of the
other two sets' prose, the retrieval memories and our corpus; on those texts its verdict here is
the one of `benchmarks/train_injection.py`'s held-out folds (a model that
did not see the text), unless `--committed-model` asks for the committed
model's own, flattering, verdict.

For a public set, an item counts as caught when a finding of that set's
family fires (a credential rule on `secrets.jsonl`, the log-dump rule on
`logs.jsonl`, an injection rule on `injection.jsonl`); "any" also counts a
negative flagged by another family, which is what a writer would see.
"""

import argparse
import json
import os
import re
import sys
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import sysconfig  # noqa: E402

import django  # noqa: E402

django.setup()

from benchmarks.docstrings import docstrings  # noqa: E402
from memory_app.safety import scan_fields  # noqa: E402
from memory_app.safety.registry import family_of  # noqa: E402
from tests.memory_app.safety.corpus import build_corpus  # noqa: E402

PUBLIC_SETS = ("secrets", "logs", "injection")
CONVERSATION = "conversation"
UI = "ui"
DOCS = "docs"
DOCSTRINGS = "docstrings"
FAMILIES = ("secrets", "logs", "injection")

# Positives of secrets.jsonl that DESIGN §3 does not ask the scanner to
# block: resource names and password hashes, not credentials. They are
# counted as "out of policy" unless the text also names a credential.
# Placeholders never block (xxxx, one repeated character, <your-token>,
# EXAMPLE, changeme), so a positive made of one is out of policy too.
PLACEHOLDER = re.compile(
    r"x{4,}|X{4,}|(\w)\1{7,}|\*{4,}|#{4,}|<[^<>\n]*>|\byour[_ -]?|example|changeme", re.I
)
OUT_OF_POLICY = re.compile(
    r"\$(?:1|2[abxy]?|5|6|8|9|y|krb5\w*|argon2\w*|pbkdf2\w*)\$"  # crypt(3)-style hashes
    r"|\barn:aws:|amazonaws\.com|storage\.googleapis\.com|\.blob\.core\.windows\.net"
    r"|\.jfrog\.io\b|\.apps\.googleusercontent\.com"
    r"|^\W*(?:#\s*)?\w*_?USER(?:NAME)?\s*[=:]",  # a user name alone
    re.I | re.M,
)
# An identifier or a host name alone (FACEBOOK_APPLICATION_ID=…,
# snowflake_account = …, shop.myshopify.com): it names an account, it
# grants nothing.
IDENTIFIER_ONLY = re.compile(
    r"^\W*(?:#\s*)?[\w.]*?_?(?:ID|ACCOUNT|NAME)\s*[=:]|^\W*[\w.-]+\.(?:com|net|cloud|io)\W*$",
    re.I | re.M,
)
# A command line whose password argument is a variable ($Password,
# %PASS%, ${USERPASS}): the secret is elsewhere, not in the text.
REFERENCE_ONLY = re.compile(
    r"(?i)\s-{1,2}(?:p|pass(?:word)?|user)[\s:]+[\"']?(?:\$\{?\w+\}?|%\w+%)[\"']?(?:\s|$)"
)
NAMES_A_CREDENTIAL = re.compile(
    r"secret|passw|pwd|token|api[_-]?key|private|-----BEGIN|bearer|authorization", re.I
)
DEFAULT_CORPORA = next(
    (p / "shared" / "corpora" for p in ROOT.parents if (p / "shared" / "corpora").is_dir()),
    ROOT.parent / "shared" / "corpora",
)


@dataclass(frozen=True)
class Item:
    text: str
    positive: bool
    kind: str
    source: str
    family: str  # the family expected to fire on a positive
    out_of_policy: str = ""  # why a positive is not asked of the scanner

    @property
    def in_policy(self) -> bool:
        return not self.out_of_policy


def public_items(corpora: Path, name: str) -> list[Item]:
    items = []
    with open(corpora / f"{name}.jsonl", encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            repo = row["source"].split(":", 1)[0]
            text = row["text"]
            positive = row["label"] == "positive"
            why_not = out_of_policy(text) if name == "secrets" and positive else ""
            items.append(Item(text, positive, row["kind"], repo, name, why_not))
    return items


def conversation_items(corpora: Path) -> list[Item]:
    """The retrieval set's memories, all benign: the injection family is the one at risk."""
    items = []
    with open(corpora / "retrieval" / "memories.jsonl", encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            repo = row["source"].split(":", 1)[0]
            items.append(Item(row["text"], False, "chat_turn", repo, "injection"))
    return items


UI_MESSAGE = re.compile(r'^msg(?:id|str(?:\[\d+\])?) ((?:".*"\n?)+)', re.M)
UI_MIN_WORDS = 6


def ui_items() -> list[Item]:
    """Django's interface messages and their translations, all benign.

    Kind says which: the English messages or their translations.
    """
    seen: set[str] = set()
    items = []
    for catalogue in sorted(Path(django.__file__).parent.rglob("LC_MESSAGES/*.po")):
        for match in UI_MESSAGE.finditer(catalogue.read_text(encoding="utf-8", errors="replace")):
            kind = "english" if match.group(0).startswith("msgid") else "translation"
            text = "".join(re.findall(r'"(.*)"', match.group(1))).replace("\\n", "\n")
            if len(text.split()) >= UI_MIN_WORDS and text not in seen:
                seen.add(text)
                items.append(Item(text, False, kind, "django/django", "injection"))
    return items


DOCS_BLOCK = 2000
MANY_SOURCES = 20
# Our own READMEs are not text we did not write.
OWN_DISTRIBUTIONS = {"agent-memory-admin", "agent-memory-client"}


def docs_items() -> list[Item]:
    """The installed distributions' descriptions, in blocks of paragraphs."""
    items = []
    for distribution in sorted(metadata.distributions(), key=lambda d: d.metadata["Name"]):
        name = distribution.metadata["Name"]
        if name in OWN_DISTRIBUTIONS:
            continue
        description = distribution.metadata.get_payload() or ""
        block = ""
        for paragraph in description.split("\n\n"):
            if block and len(block) + len(paragraph) > DOCS_BLOCK:
                items.append(Item(block, False, "readme", name, "secrets"))
                block = ""
            block += paragraph + "\n\n"
        if block.strip():
            items.append(Item(block, False, "readme", name, "secrets"))
    return items


# Our own code is not text we did not write.
OWN_PACKAGES = {"config", "memory_app", "review_app", "agent_memory_client", "tests", "benchmarks"}


def docstring_items() -> list[Item]:
    """The docstrings of the standard library and of the installed packages
    (ours left out); the source is the top-level module or package."""
    paths = sysconfig.get_paths()
    items = []
    for kind, root in (("standard library", paths["stdlib"]), ("installed", paths["purelib"])):
        for module, text in docstrings(Path(root)):
            top = Path(module).parts[0].removesuffix(".py")
            if top not in OWN_PACKAGES:
                items.append(Item(text, False, kind, top, "injection"))
    return items


def out_of_policy(text: str) -> str:
    """Why a positive of secrets.jsonl is not a credential DESIGN §3 blocks, or ""."""
    if PLACEHOLDER.search(text):
        return "placeholder"
    if REFERENCE_ONLY.search(text):
        return "variable reference"
    if not NAMES_A_CREDENTIAL.search(text):
        if OUT_OF_POLICY.search(text):
            return "resource name or hash"
        if IDENTIFIER_ONLY.search(text):
            return "identifier or host name"
    return ""


def own_items(per_kind: int) -> list[Item]:
    family = {"secrets": "secrets", "entropy": "secrets", "logs": "logs", "injection": "injection"}
    return [
        Item(s.text, s.positive, s.kind, "own corpus", family.get(s.family, ""))
        for s in build_corpus(per_kind=per_kind)
    ]


CLASSIFIER = "prompt_injection.classifier"


def families_flagged(text: str, held_out: dict[str, bool] | None = None) -> set[str]:
    """The families that block `text`.

    With `held_out` (text -> verdict of an injection model trained without
    that text), the committed classifier's verdict is replaced by the
    held-out one for every text the committed model was trained on.
    """
    findings = scan_fields({"content": text}, conversation_store=False)
    if held_out is None or text not in held_out:
        return {family_of(f.detector) for f in findings if f.blocking}
    families = {family_of(f.detector) for f in findings if f.blocking and f.detector != CLASSIFIER}
    return families | ({"injection"} if held_out[text] else set())


@dataclass
class Tally:
    positives: int = 0
    caught: int = 0
    negatives: int = 0
    flagged_same: int = 0
    flagged_any: int = 0
    flagged_by: dict[str, int] = field(default_factory=dict)

    def add(self, item: Item, families: set[str], family: str) -> None:
        if item.positive:
            self.positives += 1
            self.caught += (item.family or family) in families
        else:
            self.negatives += 1
            self.flagged_same += family in families
            self.flagged_any += bool(families)
            for name in families:
                self.flagged_by[name] = self.flagged_by.get(name, 0) + 1

    def merge(self, other: "Tally") -> None:
        for name in ("positives", "caught", "negatives", "flagged_same", "flagged_any"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for name, count in other.flagged_by.items():
            self.flagged_by[name] = self.flagged_by.get(name, 0) + count

    def family_row(self, label: str) -> str:
        """Negatives flagged by each family: where a false positive comes from."""
        cells = (
            f"{self.flagged_by.get(name, 0)}/{self.negatives} = "
            f"{self.flagged_by.get(name, 0) / self.negatives:.3f}"
            for name in FAMILIES
        )
        return f"| {label} | {' | '.join(cells)} |"

    def row(self, label: str) -> str:
        recall = f"{self.caught / self.positives:.3f}" if self.positives else "—"
        same = f"{self.flagged_same / self.negatives:.3f}" if self.negatives else "—"
        any_ = f"{self.flagged_any / self.negatives:.3f}" if self.negatives else "—"
        return (
            f"| {label} | {self.caught}/{self.positives} | {recall} | "
            f"{self.flagged_same}/{self.negatives} | {same} | {any_} |"
        )


HEADER = (
    "| {} | caught | recall | flagged | FPR (this family) | FPR (any) |\n|---|---|---|---|---|---|"
)
FAMILY_HEADER = "| negatives flagged by | {} |\n|---|---|---|---|".format(" | ".join(FAMILIES))


def score(
    name: str,
    items: Iterable[Item],
    family: str,
    *,
    min_kind: int,
    held_out: dict[str, bool] | None = None,
) -> dict[str, Tally]:
    total, by_source, by_kind = Tally(), defaultdict(Tally), defaultdict(Tally)
    in_policy, outside = Tally(), defaultdict(Tally)
    for item in items:
        families = families_flagged(item.text, held_out)
        for tally in (total, by_source[item.source], by_kind[item.kind]):
            tally.add(item, families, family)
        if item.in_policy:
            in_policy.add(item, families, family)
        else:
            outside[item.out_of_policy].add(item, families, family)
    print(f"\n### {name}\n")
    print(HEADER.format("all"))
    print(total.row("**all**"))
    if outside:
        print(in_policy.row("**in policy**"))
        for reason, tally in sorted(outside.items()):
            print(tally.row(f"out of policy: {reason}"))
    print("\n" + HEADER.format("source"))
    quiet = 0
    for source, tally in sorted(by_source.items()):
        if len(by_source) > MANY_SOURCES and not tally.positives and not tally.flagged_any:
            quiet += 1  # a long list of sources names only those with something to read
        else:
            print(tally.row(source))
    if quiet:
        print(f"| {quiet} other sources, nothing flagged | | | | | |")
    print("\n" + HEADER.format("kind"))
    small = Tally()
    for kind, tally in sorted(by_kind.items()):
        if tally.positives + tally.negatives >= min_kind:
            print(tally.row(kind))
        else:
            small.merge(tally)
    if small.positives or small.negatives:
        print(small.row(f"(kinds with fewer than {min_kind} items)"))
    if total.negatives:
        print("\n" + FAMILY_HEADER)
        print(total.family_row("**all negatives**"))
    return {"all": total}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA)
    parser.add_argument("--per-kind", type=int, default=16)
    parser.add_argument(
        "--only", choices=[*PUBLIC_SETS, CONVERSATION, UI, DOCS, DOCSTRINGS, "own"], action="append"
    )
    parser.add_argument(
        "--committed-model",
        action="store_true",
        help="score injection with the committed classifier even on the texts it was trained on",
    )
    args = parser.parse_args()
    chosen = args.only or [*PUBLIC_SETS, CONVERSATION, UI, DOCS, DOCSTRINGS, "own"]
    # The injection classifier is scored on folds of the public injection set
    # unless --committed-model asks for the weights as committed.
    needs_corpora = {*PUBLIC_SETS, CONVERSATION} & set(chosen) or not args.committed_model
    if needs_corpora and not (args.corpora / "secrets.jsonl").is_file():
        parser.error(
            f"no public development sets in {args.corpora}: name their folder (secrets.jsonl, "
            "logs.jsonl, injection.jsonl, retrieval/) with --corpora, or score only what "
            "ships with the code: --committed-model --only ui --only docs --only docstrings "
            "--only own"
        )
    held_out = None
    if not args.committed_model:
        from benchmarks.train_injection import held_out_verdicts

        held_out = held_out_verdicts(args.corpora)
    for name in PUBLIC_SETS:
        if name in chosen:
            items = public_items(args.corpora, name)
            score(f"{name}.jsonl", items, name, min_kind=5, held_out=held_out)
    if CONVERSATION in chosen:
        items = conversation_items(args.corpora)
        score("retrieval/memories.jsonl", items, "injection", min_kind=5, held_out=held_out)
    if UI in chosen:
        score("Django's interface messages", ui_items(), "injection", min_kind=1)
    if DOCS in chosen:
        score("installed packages' descriptions", docs_items(), "secrets", min_kind=1)
    if DOCSTRINGS in chosen:
        score("docstrings", docstring_items(), "injection", min_kind=1)
    if "own" in chosen:
        score("own corpus", own_items(args.per_kind), "secrets", min_kind=1, held_out=held_out)


if __name__ == "__main__":
    main()
