"""The docstrings of an installed Python source tree.

Docstrings are engineering prose that nobody here wrote: API descriptions
full of the imperative verbs and nouns attacks also use ("Return the
message", "Send data to the server", "Ignore the flags", "print the
text"). The scanner's evaluation scores the standard library's as
benign text (PSF licence).
"""

import ast
from collections.abc import Iterator
from pathlib import Path

MIN_WORDS = 6
# Test suites quote attacks and odd inputs on purpose; they are not prose.
SKIPPED_PARTS = frozenset({"test", "tests", "testing", "idlelib", "site-packages"})


def docstrings(root: Path, min_words: int = MIN_WORDS) -> Iterator[tuple[str, str]]:
    """(module path, docstring) of every module, class and function under
    `root` whose docstring has at least `min_words` words, in file order."""
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if SKIPPED_PARTS.intersection(relative.parts):
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                text = ast.get_docstring(node)
                if text and len(text.split()) >= min_words:
                    yield str(relative), text
