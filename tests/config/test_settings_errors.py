"""A wrong setting in the environment stops a command with one line that
names the variable, never with a traceback or the value of a secret."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _check(tmp_path, **environment) -> subprocess.CompletedProcess:
    env = {"PATH": os.environ["PATH"], "MEMORY_DATA_DIR": str(tmp_path), **environment}
    return subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("environment", "named"),
    [
        ({"DATABASE_URL": "notaurl"}, "DATABASE_URL is not a database URL"),
        ({"DATABASE_URL": "postgres://u:s3cret-pw@db:notaport/x"}, "DATABASE_URL is not"),
        ({"DATABASE_URL": "mysql://u:s3cret-pw@db/x"}, "DATABASE_URL must name a PostgreSQL"),
        ({"LOG_LEVEL": "LOUD"}, "LOG_LEVEL must be one of"),
        ({"MEMORY_RUN_WRITE_CAP": "abc"}, "MEMORY_RUN_WRITE_CAP must be an integer"),
        ({"CELERY_TASK_SOFT_TIME_LIMIT": "700"}, "CELERY_TASK_SOFT_TIME_LIMIT must be below"),
        ({"MEMORY_CHAIN_RETIRED_KEYS": "short"}, "MEMORY_CHAIN_RETIRED_KEYS holds a key"),
        ({"MEMORY_DB_SHARED_BUFFERS": "lots"}, "MEMORY_DB_SHARED_BUFFERS must be a size"),
        ({"MEMORY_DB_SHARED_BUFFERS": "200TB"}, "MEMORY_DB_SHARED_BUFFERS must lie between"),
    ],
)
def test_a_wrong_setting_is_one_line_naming_it(tmp_path, environment, named):
    result = _check(tmp_path, **environment)
    assert result.returncode != 0
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"Configuration error: {named}")
    assert "Traceback" not in result.stderr and "s3cret-pw" not in result.stderr


def test_a_log_level_in_lower_case_is_understood(tmp_path):
    result = _check(tmp_path, LOG_LEVEL="warning")
    assert result.returncode == 0, result.stderr
