"""One env-driven settings file. Defaults are the embedded ones (SQLite, filesystem broker);
production sets SECRET_KEY, ALLOWED_HOSTS, DATABASE_URL, REDIS_URL and DJANGO_DEBUG=0."""

import os
import secrets
from pathlib import Path

import dj_database_url
from csp.constants import NONCE, NONE, SELF

from config.env import env_bool, env_float, env_int, env_list, env_rate, env_str
from config.oidc import BACKEND as OIDC_BACKEND
from config.oidc import oidc_settings
from estimator import limits

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("CLUSTERPLAN_VAR_DIR", str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)


def _secret_key() -> str:
    # Never a key in the repo: production passes SECRET_KEY; a local run makes one in var/.
    key = env_str("SECRET_KEY")
    if key:
        return key
    path = VAR_DIR / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = _secret_key()
DEBUG = env_bool("DJANGO_DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI and Redoc served locally (air-gapped labs)
    "axes",  # login attempt limit
    "csp",
    "teams",
    "pricebooks",
    "reports",
    "api",
    "sweeps",
    "accounts",  # named API tokens; OIDC sign-in when configured
    "integrations",
]

MIDDLEWARE = [
    "api.conventions.RequestIdMiddleware",  # X-Request-Id on every response and log line
    "django.middleware.security.SecurityMiddleware",
    "api.conventions.ApiResponseMiddleware",  # under /api/: JSON errors, Retry-After, RateLimit
    "config.middleware.BodyLimitMiddleware",  # 413 / 411 before anything reads the body
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "reports.middleware.PreferredLanguageRedirectMiddleware",  # share links open in the reader's language
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "integrations.middleware.IdempotencyMiddleware",  # Idempotency-Key on every API POST
    "config.middleware.PageThrottleMiddleware",  # every state-changing page, per user or client
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "axes.middleware.AxesMiddleware",  # last, as django-axes requires
]
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",  # first: refuses a locked-out client before the password check
    "django.contrib.auth.backends.ModelBackend",
]
# OpenID Connect sign-in (mozilla-django-oidc), off unless OIDC_RP_CLIENT_ID and the provider's
# endpoints are set (config/oidc.py); when off, no app, backend, URL or button.
_OIDC = oidc_settings(os.environ)
OIDC_ENABLED = bool(_OIDC)
if OIDC_ENABLED:
    INSTALLED_APPS.append("mozilla_django_oidc")
    AUTHENTICATION_BACKENDS.append(OIDC_BACKEND)
    globals().update(_OIDC)
# Named API tokens (accounts): live tokens one user may hold at a time.
API_TOKENS_MAX_PER_USER = env_int("API_TOKENS_MAX_PER_USER", 20, minimum=1)

ROOT_URLCONF = "config.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]
WSGI_APPLICATION = "config.wsgi.application"

DATABASES = {
    "default": dj_database_url.config(
        env="DATABASE_URL",
        default=f"sqlite:///{VAR_DIR / 'db.sqlite3'}",
        conn_max_age=env_int("DB_CONN_MAX_AGE", 60, minimum=0),
    )
}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # A web process and worker processes share the file: wait for locks instead of failing, take
    # the write lock up front, and keep the test database in a file so worker subprocesses see it.
    # synchronous stays FULL (SQLite's default): a commit waits for the disk, so an estimate that was
    # answered 201 survives a power loss. NORMAL would save ~0.4 ms a commit (three a POST) but a
    # power loss or OS crash could undo the last commits (sqlite.org/pragma.html#pragma_synchronous):
    # a saved plan and its share link lost, which this product does not trade for speed.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "timeout": 30,
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;",
        }
    )
    # (one file per test run, so concurrent runs in one checkout do not share it)
    DATABASES["default"]["TEST"] = {
        "NAME": env_str("SQLITE_TEST_NAME", str(VAR_DIR / f"test_db_{os.getpid()}.sqlite3"))
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
# A URL name, resolved in the request's language: a Chinese page that needs a sign-in sends the
# reader to the Chinese sign-in page (and back to the page, in Chinese, after it).
LOGIN_URL = "reports:login"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
# Plotly's JavaScript comes from the installed plotly package (no CDN, no vendored copy).
PLOTLY_JS_DIR = Path(str(__import__("plotly").__file__)).resolve().parent / "package_data"
STATICFILES_DIRS = [BASE_DIR / "static", ("vendor/plotly", PLOTLY_JS_DIR)]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if not DEBUG and env_bool("STATIC_MANIFEST", False)
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
WHITENOISE_USE_FINDERS = True

# Security: secure cookies and HSTS whenever not in debug (production passes check --deploy).
SECURE_HTTPS = env_bool("SECURE_HTTPS", not DEBUG)
SESSION_COOKIE_SECURE = SECURE_HTTPS
CSRF_COOKIE_SECURE = SECURE_HTTPS
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", SECURE_HTTPS)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000 if SECURE_HTTPS else 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = SECURE_HTTPS
SECURE_HSTS_PRELOAD = SECURE_HTTPS
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SECURE_REFERRER_POLICY = "same-origin"
SESSION_COOKIE_HTTPONLY = True
# Content-Security-Policy (django-csp): scripts only from this site (static files) or carrying the
# response's nonce; no inline handlers, no eval. Plotly writes inline styles.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF, NONCE],
        "style-src": [SELF, "'unsafe-inline'"],
        "img-src": [SELF, "data:", "blob:"],
        "font-src": [SELF, "data:"],
        "connect-src": [SELF],
        "worker-src": [SELF, "blob:"],  # Redoc's search index runs in a worker made from a blob
        "object-src": [NONE],
        "base-uri": [NONE],
        "frame-ancestors": [NONE],
        "form-action": [SELF],
    }
}

# Request bodies (estimator.limits): larger ones answer 413 (config.middleware.BodyLimitMiddleware).
DATA_UPLOAD_MAX_MEMORY_SIZE = limits.MAX_BODY_BYTES
API_MAX_BODY_BYTES = limits.MAX_BODY_BYTES
# Client identity (api.throttling.client_ip): how many reverse proxies in front of the app append
# to X-Forwarded-For. 0 (default): the TCP peer is the client and X-Forwarded-For is ignored.
TRUSTED_PROXIES = env_int("TRUSTED_PROXIES", 0, minimum=0, maximum=20)
# Login attempt limit (django-axes): 5 failures per username and address lock that pair for 15 min.
AXES_FAILURE_LIMIT = env_int("AXES_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = env_float("AXES_COOLOFF_HOURS", 0.25, minimum=0)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_CLIENT_IP_CALLABLE = "api.throttling.client_ip"
AXES_VERBOSE = False

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "accounts.authentication.ApiTokenAuthentication",  # Bearer or Token <named API token>
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.AllowAny"],
    "DEFAULT_THROTTLE_CLASSES": [
        "api.throttling.AnonRateThrottle",
        "api.throttling.UserRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "anon": env_rate("THROTTLE_ANON", "120/minute"),
        "user": env_rate("THROTTLE_USER", "600/minute"),
        "sweeps": env_rate("THROTTLE_SWEEPS", "20/hour"),  # sweep requests, refused ones too
        "pages": env_rate("THROTTLE_PAGES", "60/minute"),  # state-changing page requests
    },
    "NUM_PROXIES": TRUSTED_PROXIES,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "api.exceptions.exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "ClusterPlan API",
    "DESCRIPTION": "Capacity and cost estimates for large-model training clusters.",
    # docs/api-versioning.md: minor for additions (1.1: amounts, teams API, conventions; 1.2: sweep reason codes;
    # 1.3: a refused sweep group's errors)
    "VERSION": "1.2.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "OAS_VERSION": "3.1.0",  # JSON Schema 2020-12 inside, like the scenario schema
    "SCHEMA_PATH_PREFIX": "/api/v1",
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {
        "WebhookStatusEnum": "integrations.models.CallbackStatus",
        "BatchStatusEnum": "integrations.models.BatchStatus",
        "SweepStatusEnum": "sweeps.models.Sweep.Status",
    },
    "WEBHOOKS": ["integrations.api.webhook_docs.sweep_finished", "integrations.api.webhook_docs.batch_done"],
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "integrations.api.schema.document_idempotency_key",  # the header on every POST and PUT
        "api.result_schema.document_result",  # named schemas of the result's sections
        "api.openapi_hooks.document_conventions",  # errors and headers every operation can answer
    ],
}

# Celery: Redis in production/CI when REDIS_URL is set; a server-less filesystem broker otherwise.
REDIS_URL = env_str("REDIS_URL")

# One cache for every process (throttle counters, login attempts' cool-off, cached pages): Redis
# when configured, else the database (table made by api's migration 0001).
CACHE_URL = env_str("CACHE_URL", REDIS_URL)
if CACHE_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": CACHE_URL,
            "KEY_PREFIX": "clusterplan",
        }
    }
else:
    CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": "clusterplan_cache"}
    }
BROKER_DIR = VAR_DIR / "broker"
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {
        "visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 300, minimum=1),
        "socket_connect_timeout": 5,  # an unreachable broker fails fast (the sweep watchdog reports it)
    }
else:
    for sub in ("out", "processed", "control"):
        (BROKER_DIR / sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_URL = "filesystem://"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "out"),
        "data_folder_out": str(BROKER_DIR / "out"),
        "processed_folder": str(BROKER_DIR / "processed"),
        "control_folder": str(BROKER_DIR / "control"),  # exchange bindings (default: ./control in the cwd)
        "store_processed": False,
    }
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Time limits of every task (seconds): soft raises inside the task, hard replaces the process.
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 120, minimum=1)
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 150, minimum=1)
CELERY_BEAT_SCHEDULE = {  # only where a `celery beat` runs (docker-compose); status reads also run it
    "sweeps-watchdog": {"task": "sweeps.watchdog", "schedule": env_float("SWEEP_STALL_S", 30, minimum=1)},
    "integrations-housekeeping": {"task": "integrations.housekeeping", "schedule": 600.0},
}

# Sweeps (see sweeps/services.py): limits, chunking and the watchdog that prevents silent hangs.
SWEEP_MAX_SCENARIOS = env_int(
    "SWEEP_MAX_SCENARIOS", 2_000_000, minimum=1, maximum=limits.MAX_SWEEP_ROWS
)  # per sweep
SWEEP_ANON_MAX_SCENARIOS = env_int(
    "SWEEP_ANON_MAX_SCENARIOS", 200_000, minimum=1, maximum=limits.MAX_SWEEP_ROWS
)  # without an account
SWEEP_MAX_ACTIVE_PER_USER = env_int("SWEEP_MAX_ACTIVE_PER_USER", 3, minimum=1)
SWEEP_MAX_ACTIVE_ANON = env_int("SWEEP_MAX_ACTIVE_ANON", 2, minimum=0)  # per client IP
# scenarios per task: 50k costs ~30-45% less worker CPU than 25k on 1e6 given-MFU rows (fewer tasks,
# stores and summary merges) for ~15-20 MB more worker peak RSS (bench/sweep.py --chunk-size)
SWEEP_CHUNK_SIZE = env_int("SWEEP_CHUNK_SIZE", 50_000, minimum=1)
SWEEP_STALL_S = env_float("SWEEP_STALL_S", 30, minimum=1)  # no progress this long: re-queue lost chunks
SWEEP_FAIL_AFTER_S = env_float("SWEEP_FAIL_AFTER_S", 600, minimum=1)  # ... this long: failed, with why
SWEEP_SUB_BATCH = env_int("SWEEP_SUB_BATCH", 2000, minimum=1)  # a chunk's first sub-batch (rows)
# Later sub-batches are sized from the measured rate to take SWEEP_SUB_BATCH_S seconds (0: every one
# SWEEP_SUB_BATCH rows), at most SWEEP_SUB_BATCH_MAX rows; cancel and lease checked between them.
SWEEP_SUB_BATCH_S = env_float("SWEEP_SUB_BATCH_S", 0.3, minimum=0)
SWEEP_SUB_BATCH_MAX = env_int("SWEEP_SUB_BATCH_MAX", 200_000, minimum=1)  # bounds a sub-batch's memory
SWEEP_LEASE_S = env_float("SWEEP_LEASE_S", 30, minimum=1)  # a chunk's lease; renewed every sub-batch
SWEEP_CHUNK_SOFT_S = env_int("SWEEP_CHUNK_SOFT_S", 900, minimum=1)  # one chunk: soft time limit
SWEEP_CHUNK_HARD_S = env_int("SWEEP_CHUNK_HARD_S", 960, minimum=1)  # ... hard time limit

# Integrations (integrations/): idempotency records and webhooks (docs/procurement.md#webhooks).
IDEMPOTENCY_TTL_S = env_int("IDEMPOTENCY_TTL_S", 24 * 3600, minimum=1)  # a repeat within this
# While a first request runs, its key is leased for this long and renewed by a heartbeat every third
# of it: a key whose request died (its process killed) is free again within this many seconds.
IDEMPOTENCY_LEASE_S = env_float("IDEMPOTENCY_LEASE_S", 6, minimum=1)
# Batches (integrations.batch_work): planned by Celery workers on the "batches" queue.
BATCH_MAX_ACTIVE_PER_USER = env_int("BATCH_MAX_ACTIVE_PER_USER", 2, minimum=1)  # queued or running
BATCH_MAX_ACTIVE_ANON = env_int("BATCH_MAX_ACTIVE_ANON", 1, minimum=0)  # per client IP
BATCH_LEASE_S = env_float("BATCH_LEASE_S", 20, minimum=1)  # a batch's lease, renewed every item
BATCH_STALL_S = env_float("BATCH_STALL_S", 15, minimum=1)  # no progress and no lease: re-queued
# The workers' own recovery loop (integrations.recovery): every this many seconds it re-queues what
# a lost broker message or a dead process left behind (sweep chunks, batches, webhook attempts).
RECOVERY_INTERVAL_S = env_float("RECOVERY_INTERVAL_S", 10, minimum=1)
# Webhook targets on loopback, private, link-local or reserved addresses: refused unless allowed
# (a lab whose quoting system sits on a private network sets 1); plain http only where allowed.
WEBHOOK_ALLOW_PRIVATE_TARGETS = env_bool("WEBHOOK_ALLOW_PRIVATE_TARGETS", DEBUG)
WEBHOOK_ALLOW_HTTP = env_bool("WEBHOOK_ALLOW_HTTP", DEBUG)
WEBHOOK_MAX_ATTEMPTS = env_int("WEBHOOK_MAX_ATTEMPTS", 10, minimum=1, maximum=100)  # then the delivery failed
WEBHOOK_BACKOFF_S = env_float("WEBHOOK_BACKOFF_S", 10, minimum=0)  # 10 s, 20 s, 40 s, ... between attempts
WEBHOOK_BACKOFF_MAX_S = env_float("WEBHOOK_BACKOFF_MAX_S", 1800, minimum=0)  # ... at most 30 min
WEBHOOK_CONNECT_TIMEOUT_S = env_float("WEBHOOK_CONNECT_TIMEOUT_S", 5, minimum=0.1, maximum=60)
WEBHOOK_READ_TIMEOUT_S = env_float("WEBHOOK_READ_TIMEOUT_S", 10, minimum=0.1, maximum=60)
# One attempt as a whole (connect, TLS, request and answer): a receiver trickling one byte at a time
# is cut off here, so a delivery worker is never held longer.
WEBHOOK_DEADLINE_S = env_float("WEBHOOK_DEADLINE_S", 15, minimum=0.1, maximum=300)
WEBHOOK_SECRET_GRACE_S = env_int("WEBHOOK_SECRET_GRACE_S", 24 * 3600, minimum=0)  # old secret signs too

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_id": {"()": "api.conventions.RequestIdLogFilter"}},
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s [%(request_id)s] %(name)s: %(message)s"}},
    "handlers": {
        "console": {"class": "logging.StreamHandler", "filters": ["request_id"], "formatter": "plain"}
    },
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "WARNING").upper()},
    # the access log: one line per API request (method, path, status, duration) with its X-Request-Id
    "loggers": {"api.requests": {"level": "INFO"}},
}
