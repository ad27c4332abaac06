"""Recall and false-positive rate of the safety scanner, per detector kind,
side by side with detect-secrets on the same corpus.

    .venv/bin/python benchmarks/scanner_eval.py [--per-kind 16]

The corpus (tests/memory_app/safety/corpus.py) is generated at run time from
a fixed seed. detect-secrets scans each sample as a file with its default
plugins and filters, which is how it is normally run.
"""

import argparse
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django

django.setup()

from memory_app.safety import scan_fields  # noqa: E402
from tests.memory_app.safety.corpus import build_corpus  # noqa: E402


def ours(samples) -> list[bool]:
    return [
        any(f.blocking for f in scan_fields({"content": s.text}, conversation_store=False))
        for s in samples
    ]


def detect_secrets_flags(samples) -> list[bool]:
    from detect_secrets import SecretsCollection
    from detect_secrets.settings import default_settings

    with tempfile.TemporaryDirectory() as folder, default_settings():
        paths = []
        for index, sample in enumerate(samples):
            path = Path(folder) / f"sample_{index}.txt"
            path.write_text(sample.text)
            paths.append(str(path))
        collection = SecretsCollection()
        collection.scan_files(*paths)
        flagged = {Path(name).name for name in collection.files}
    return [f"sample_{i}.txt" in flagged for i in range(len(samples))]


def report(name: str, samples, flags: list[bool], seconds: float) -> None:
    by_kind: dict[str, list[bool]] = defaultdict(list)
    for sample, flag in zip(samples, flags, strict=True):
        by_kind[("+ " if sample.positive else "- ") + sample.kind].append(flag)
    positives = [f for s, f in zip(samples, flags, strict=True) if s.positive]
    negatives = [f for s, f in zip(samples, flags, strict=True) if not s.positive]
    print(f"\n== {name}: {len(samples)} samples in {seconds * 1000:.0f} ms")
    print(
        f"recall {sum(positives) / len(positives):.3f} on {len(positives)} positives; "
        f"false positives {sum(negatives) / len(negatives):.3f} on {len(negatives)} negatives"
    )
    for kind, kind_flags in sorted(by_kind.items()):
        rate = sum(kind_flags) / len(kind_flags)
        label = "recall" if kind.startswith("+") else "flagged"
        print(f"  {kind:<28} {label} {rate:.2f}  (n={len(kind_flags)})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--per-kind", type=int, default=16)
    args = parser.parse_args()
    samples = build_corpus(per_kind=args.per_kind)
    for name, scanner in [
        ("memory_app.safety", ours),
        ("detect-secrets 1.5.0", detect_secrets_flags),
    ]:
        started = time.perf_counter()
        flags = scanner(samples)
        report(name, samples, flags, time.perf_counter() - started)


if __name__ == "__main__":
    main()
