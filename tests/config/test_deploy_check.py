"""`check --deploy` is clean with the production environment the README documents."""

import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _documented_environment() -> dict[str, str]:
    """The `NAME=value` lines of the README's TLS and security headers block."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("### TLS and security headers", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    return dict(line.split("=", 1) for line in block.split())


def _check_deploy(tmp_path, **environment) -> subprocess.CompletedProcess:
    env = {
        "PATH": os.environ["PATH"],
        "MEMORY_DATA_DIR": str(tmp_path),
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
        "MEMORY_CHAIN_KEY": secrets.token_urlsafe(40),
        "DJANGO_ALLOWED_HOSTS": "memory.example.org",
        **environment,
    }
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_documented_production_environment_passes_check_deploy(tmp_path):
    environment = _documented_environment()
    assert {"DJANGO_HSTS_SECONDS", "DJANGO_SECURE_SSL_REDIRECT"} <= set(environment)
    result = _check_deploy(tmp_path, **environment)
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


def test_without_it_check_deploy_names_what_is_missing(tmp_path):
    result = _check_deploy(tmp_path, MEMORY_CHAIN_KEY="")
    assert result.returncode != 0
    for warning in ("security.W004", "security.W008", "security.W012", "memory_app.W002"):
        assert warning in result.stderr


def test_the_proxy_header_setting_names_the_forwarded_header(tmp_path):
    code = "import django; django.setup(); from django.conf import settings; "
    code += "print(settings.SECURE_PROXY_SSL_HEADER, settings.SECURE_HSTS_SECONDS)"
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={
            "PATH": os.environ["PATH"],
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "MEMORY_DATA_DIR": str(tmp_path),
            **_documented_environment(),
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.stdout.strip() == "('HTTP_X_FORWARDED_PROTO', 'https') 31536000"


@pytest.mark.django_db
def test_behind_the_proxy_plain_http_is_redirected_but_health_checks_are_not(client, settings):
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.SECURE_HSTS_SECONDS = 3600
    plain = client.get("/accounts/login/")
    assert plain.status_code == 301
    assert plain["Location"].startswith("https://")
    secure = client.get("/accounts/login/", HTTP_X_FORWARDED_PROTO="https")
    assert secure.status_code == 200
    assert secure["Strict-Transport-Security"] == "max-age=3600"
    for probe in ("/healthz", "/readyz", "/metrics"):
        assert client.get(probe).status_code == 200
