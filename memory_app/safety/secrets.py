"""Credentials with a recognisable shape: cloud keys, tokens, key blocks, URLs.

Each pattern is anchored on something only a credential has (a vendor
prefix, a PEM armour line, a `user:password@` pair) so that git SHAs, UUIDs
and digests, which have none, never match here; shapeless secrets are the
entropy detector's job.
"""

import re

from memory_app.safety.types import Detector, Span

_PATTERNS: dict[str, re.Pattern[str]] = {
    "aws_access_key_id": re.compile(
        r"(?<![A-Z0-9])(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[A-Z0-9]{16}(?![A-Z0-9])"
    ),
    "aws_secret_access_key": re.compile(
        r"(?i)aws.{0,20}?(?:secret|sk).{0,20}?['\"=:\s]\s*['\"]?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])"
    ),
    "github_token": re.compile(
        r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{50,255})"
    ),
    "gitlab_token": re.compile(r"(?<![A-Za-z0-9_])glpat-[A-Za-z0-9_-]{20,}"),
    "slack_token": re.compile(r"(?<![A-Za-z0-9])xox[abposr]-[A-Za-z0-9-]{10,}"),
    "stripe_key": re.compile(r"(?<![A-Za-z0-9])(?:sk|rk)_live_[A-Za-z0-9]{16,}"),
    "google_api_key": re.compile(r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])"),
    "private_key_block": re.compile(
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----)?"
    ),
    "certificate_block": re.compile(
        r"-----BEGIN CERTIFICATE-----(?:[\s\S]*?-----END CERTIFICATE-----)?"
    ),
    "kubeconfig_credential": re.compile(
        r"(?m)^\s*(?:client-key-data|client-certificate-data|certificate-authority-data)"
        r"\s*:\s*[A-Za-z0-9+/=]{20,}"
    ),
    "jwt": re.compile(
        r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"
    ),
    "database_url_password": re.compile(
        r"(?i)\b(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|redis|rediss|amqps?|mssql"
        r"|sqlserver|oracle|clickhouse)://[^\s:/@]+:([^\s@/]+)@[^\s/]+"
    ),
    "authorization_header": re.compile(
        r"(?i)(?:\bauthorization\s*[:=]\s*['\"]?\s*)?\b(?:bearer|basic)\s+([A-Za-z0-9._~+/-]{16,}=*)"
    ),
}

# `Bearer <key>` prose ("send a Bearer token") has no token after it; a
# placeholder such as `Bearer $TOKEN` or `Bearer <key>` is not a credential.
_PLACEHOLDER = re.compile(r"^(?:x+|\*+|\.+|your[_-]?\w*|token|redacted|example\w*)$", re.I)


def _credential_spans(text: str) -> list[Span]:
    spans: list[Span] = []
    for name, pattern in _PATTERNS.items():
        for match in pattern.finditer(text):
            value = match.group(match.lastindex or 0)
            if _PLACEHOLDER.match(value):
                continue
            spans.append(Span(name, match.start(), match.end()))
    return spans


DETECTORS: list[Detector] = [Detector("secrets", _credential_spans)]
