"""`python3 tasks.py` on an older Python says which one it needs.

Whatever python3 the machine has runs the file, so the check must come
before anything that an older Python would fail on first: the file must
compile on Python 3.7 (the oldest syntax `ast` can check for), and nothing
but imports may run before the check.
"""

import ast
from pathlib import Path

import tasks

SOURCE = Path(tasks.__file__).read_text()


def test_the_file_compiles_with_the_syntax_of_python_3_7():
    ast.parse(SOURCE, feature_version=(3, 7))


def test_only_imports_run_before_the_version_check():
    body = ast.parse(SOURCE).body
    docstring, *statements = body
    assert isinstance(docstring, ast.Expr) and isinstance(docstring.value, ast.Constant)
    while isinstance(statements[0], ast.Import | ast.ImportFrom):
        statements.pop(0)
    check = statements[0]
    assert isinstance(check, ast.If)
    assert "sys.version_info" in ast.unparse(check.test)
    assert ast.unparse(check.body[0]).startswith("sys.exit(")
