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
        ({"MEMORY_CACHE_URL": "notaurl"}, "MEMORY_CACHE_URL is not a Redis URL"),
        ({"MEMORY_CACHE_URL": "redis://:s3cret-pw@cache:notaport/0"}, "MEMORY_CACHE_URL is not"),
        ({"MEMORY_CACHE_URL": "redis://cache:6379/0,memcached://cache"}, "MEMORY_CACHE_URL is not"),
        ({"CELERY_BROKER_URL": "nope://"}, "CELERY_BROKER_URL names no transport"),
        ({"CELERY_BROKER_URL": "amqp://mq//;nope://mq"}, "CELERY_BROKER_URL names no transport"),
        ({"CELERY_BROKER_URL": "s3cret-pw"}, "CELERY_BROKER_URL is not a broker URL"),
        ({"CELERY_BROKER_URL": "redis://:s3cret-pw@mq:notaport/0"}, "CELERY_BROKER_URL is not"),
        ({"CELERY_BROKER_URL": "filesystem://"}, "CELERY_BROKER_URL must be left unset"),
        ({"CELERY_BROKER_URL": "memory://"}, "CELERY_BROKER_URL names kombu's in-process"),
        ({"MEMORY_WORKER": "bogus"}, "MEMORY_WORKER must be a boolean"),
        ({"MEMORY_LISTEN": "127.0.0.1:99999"}, "MEMORY_LISTEN must be HOST:PORT"),
        ({"MEMORY_LISTEN": "127.0.0.1:0"}, "MEMORY_LISTEN must be HOST:PORT"),
        ({"MEMORY_LISTEN": "127.0.0.1"}, "MEMORY_LISTEN must be HOST:PORT"),
        ({"MEMORY_LISTEN": ":8000"}, "MEMORY_LISTEN must be HOST:PORT"),
        ({"MEMORY_LISTEN": "local host:8000"}, "MEMORY_LISTEN must be HOST:PORT"),
        ({"MEMORY_LISTEN": ""}, "MEMORY_LISTEN must be HOST:PORT"),
        ({"MEMORY_CONSOLIDATE_TARGET": "Runbooks"}, "MEMORY_CONSOLIDATE_TARGET must be"),
        ({"MEMORY_CONSOLIDATE_TARGET": "workspace/runbooks"}, "MEMORY_CONSOLIDATE_TARGET must"),
        ({"MEMORY_CONSOLIDATE_TARGET": "runbooks\n"}, "MEMORY_CONSOLIDATE_TARGET must be"),
        ({"MEMORY_DATA_DIR": "/proc/no-such-folder"}, "MEMORY_DATA_DIR (/proc/no-such-folder)"),
        ({"PROMETHEUS_MULTIPROC_DIR": "/no-such-folder"}, "PROMETHEUS_MULTIPROC_DIR must be"),
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


@pytest.mark.parametrize(
    "environment",
    [
        # Servers that are down are a runtime matter, which /readyz reports, and
        # so is a target store that does not exist (the consolidation job's).
        {
            "CELERY_BROKER_URL": "redis://127.0.0.1:1/0",
            "MEMORY_CACHE_URL": "redis://127.0.0.1:1/0",
            "MEMORY_CONSOLIDATE_TARGET": "no_such_store",
            "MEMORY_WORKER": "off",
            "MEMORY_LISTEN": "0.0.0.0:8080",
        },
        {
            "CELERY_BROKER_URL": "amqp://guest:guest@127.0.0.1:1//;amqps://mq.internal//",
            "MEMORY_CACHE_URL": "rediss://cache-a:6380/0,redis://cache-b:6379/0",
            "MEMORY_LISTEN": "memory.internal:65535",
        },
        {
            "CELERY_BROKER_URL": "sqla+postgresql://u@db/broker",
            "MEMORY_CACHE_URL": "unix:///run/redis.sock",
            "MEMORY_LISTEN": "::1:8000",
        },
    ],
)
def test_well_formed_settings_start(tmp_path, environment):
    result = _check(tmp_path, **environment)
    assert result.returncode == 0, result.stderr
