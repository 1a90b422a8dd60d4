"""Settings, read from the environment (SPEC's table); each has a sane default."""

from __future__ import annotations

import json
import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from chatsite import backends

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("CHAT_VAR_DIR", BASE_DIR / "var"))
VAR_DIR.mkdir(parents=True, exist_ok=True)


def env_bool(name: str, default: bool) -> bool:
    """Read a yes/no environment variable."""
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str) -> list[str]:
    """Read a comma-separated environment variable."""
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


DEBUG = env_bool("DJANGO_DEBUG", True)
SECRET_KEY = os.environ.get(
    "DJANGO_SECRET_KEY", "dev-insecure-key-change-me-dev-insecure-key-change-me-0123456789"
)
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver")
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "servestatic",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "channels",
    "ninja",  # serves Swagger UI's files from our static files, not a CDN (/api/v1/docs)
    "csp",
    "core",  # the RLS migration, and `migrate`/`flush` as the tables' owner
    "accounts",
    "conversations",
    "transfers",
    "knowledge",
    "memories",
    "toolbox",
    "sso",
    "presets",
    "prompts",
    "voice",
    "usage",
    "audit",
    "django_tasks",
    "django_tasks_db",  # the tasks' table, its admin (failed tasks and their tracebacks)
    "jobs",  # the workers' heartbeat: a task whose worker died runs again
]

MIDDLEWARE = [
    # Outermost: a 500 caused by PostgreSQL or Redis out of reach becomes a 503
    # (core/unavailable.py).
    "core.unavailable.UnavailableMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # A NUL in an admin address or filter: 400, before the admin reads it.
    "core.storable_query.StorableQueryMiddleware",
    "servestatic.middleware.ServeStaticMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Whose rows the database shows this request (core/rls.py): after authentication.
    "accounts.middleware.RowLevelSecurityMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    # Every page needs a login unless its view is marked @login_not_required.
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
]

# Content-Security-Policy on every response (django-csp; Django 5.2 has none of its own):
# scripts, styles and connections (the websocket included) only from this origin.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        # blob: for the preview of an image picked for the next message (an object URL of
        # the user's own file); nowhere else.
        "img-src": ["'self'", "data:", "blob:"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}

# The user `manage.py demo` makes (its password: DEMO_PASSWORD) and `manage.py chat` acts as.
DEMO_USERNAME = "demo"

ROOT_URLCONF = "chatsite.urls"
ASGI_APPLICATION = "chatsite.asgi.application"
WSGI_APPLICATION = None

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
                "django.template.context_processors.i18n",
                "chatsite.context_processors.chat",
            ],
        },
    },
]

# --- database -------------------------------------------------------------
DATABASE_URL = os.environ.get("DATABASE_URL", f"sqlite:///{VAR_DIR / 'db.sqlite3'}")
# PostgreSQL's pool: its size, and how long a request waits for a connection (then 503).
DB_POOL_SIZE = int(os.environ.get("DB_POOL_SIZE", 20))
DB_POOL_TIMEOUT = float(os.environ.get("DB_POOL_TIMEOUT", 3))
# The longest one statement may take, in seconds (0: no limit): PostgreSQL ends a slower one
# (`statement_timeout`: that request's 503, not an outage), and a server that has not answered a
# second later (packets dropped, a frozen host) is given up on, its connection closed: an
# outage, 503. Migrations and flush (as the tables' owner) and the agent's checkpoints (their
# own pool) have no limit (core/db/postgresql/base.py).
DB_STATEMENT_TIMEOUT = float(os.environ.get("DB_STATEMENT_TIMEOUT", 30))
DATABASES = {
    "default": backends.database(
        DATABASE_URL, pool_size=DB_POOL_SIZE, pool_timeout=DB_POOL_TIMEOUT, var_dir=VAR_DIR
    )
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- redis: channel layer, cache, rate limits -------------------------------
REDIS_URL = os.environ.get("REDIS_URL") or None
# The most connections the app's own Redis client holds per process (progress, rate limits,
# presence); past it a command waits for a free one. See docs/deployment.md.
REDIS_MAX_CONNECTIONS = int(os.environ.get("REDIS_MAX_CONNECTIONS", 100))
TASKS = backends.tasks(DATABASES["default"])
CHANNEL_LAYERS = backends.channel_layers(REDIS_URL)
CACHES = backends.caches(REDIS_URL)

# --- auth ------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# Single sign-on with OpenID Connect (sso/): on when a discovery URL and a client id are set.
# The redirect URI to register at the provider is <site>/accounts/oidc/callback/.
OIDC_DISCOVERY_URL = os.environ.get("OIDC_DISCOVERY_URL", "").strip()
OIDC_CLIENT_ID = os.environ.get("OIDC_CLIENT_ID", "").strip()
OIDC_CLIENT_SECRET = os.environ.get("OIDC_CLIENT_SECRET", "")
OIDC_USERNAME_CLAIM = os.environ.get("OIDC_USERNAME_CLAIM", "preferred_username").strip()
# Only these e-mail domains (the `email` claim, not marked unverified) may sign in; empty: any.
OIDC_ALLOWED_DOMAINS = [d.lower().lstrip("@") for d in env_list("OIDC_ALLOWED_DOMAINS", "")]
# Only members of one of these groups (the OIDC_GROUPS_CLAIM list) may sign in; empty: any.
OIDC_ALLOWED_GROUPS = env_list("OIDC_ALLOWED_GROUPS", "")
OIDC_GROUPS_CLAIM = os.environ.get("OIDC_GROUPS_CLAIM", "groups").strip()
OIDC_PROVIDER_NAME = os.environ.get("OIDC_PROVIDER_NAME", "").strip() or "OpenID Connect"
# Password login, sign-up and the admin's own login form are off; only the SSO button.
OIDC_ONLY = env_bool("OIDC_ONLY", False)
# The provider gets this many seconds per request (discovery, keys, token exchange).
OIDC_TIMEOUT = float(os.environ.get("OIDC_TIMEOUT", 10))
if OIDC_ONLY and not (OIDC_DISCOVERY_URL and OIDC_CLIENT_ID):
    raise ImproperlyConfigured("OIDC_ONLY needs OIDC_DISCOVERY_URL and OIDC_CLIENT_ID.")

# --- i18n ------------------------------------------------------------------
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("ko", "한국어")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = os.environ.get("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

# --- static ------------------------------------------------------------------
STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
SERVESTATIC_USE_FINDERS = env_bool("SERVESTATIC_USE_FINDERS", DEBUG)
SERVESTATIC_AUTOREFRESH = SERVESTATIC_USE_FINDERS

# --- security (manage.py check --deploy is clean with DJANGO_DEBUG=0) ----------
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # the page's JS reads it for API calls
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
if not DEBUG:
    SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = int(os.environ.get("DJANGO_HSTS_SECONDS", 31536000))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_REDIRECT_EXEMPT = [r"^healthz$"]  # the load balancer's check speaks plain HTTP

# --- the chat (SPEC's settings table) ------------------------------------------
OPENAI_API_KEY = os.environ.get("OPENAI_API_KEY") or None
OPENAI_BASE_URL = os.environ.get("OPENAI_BASE_URL") or None
CHAT_MODEL = os.environ.get("CHAT_MODEL", "gpt-4o-mini")
CHAT_CONTEXT_WINDOW = int(os.environ.get("CHAT_CONTEXT_WINDOW", 128000))
# The models users may pick (SPEC: Models and instructions): ids, or "auto" to ask the
# server's GET /models (cached 5 min). CHAT_MODEL is the default and always offered.
CHAT_MODELS = os.environ.get("CHAT_MODELS", "")
# A window per model ("id=tokens,..."); the others use CHAT_CONTEXT_WINDOW.
CHAT_MODEL_CONTEXT = os.environ.get("CHAT_MODEL_CONTEXT", "")
CHAT_VISION_MODELS = env_list("CHAT_VISION_MODELS", "")
# Dictation: a recording goes to the model server's /audio/transcriptions with this model
# (whisper-1, a whisper.cpp or faster-whisper model); empty: no microphone button.
CHAT_STT_MODEL = os.environ.get("CHAT_STT_MODEL", "").strip()
CHAT_STT_MAX_SECONDS = int(os.environ.get("CHAT_STT_MAX_SECONDS", 120))
# Reading aloud by the model server's /audio/speech (tts-1, a LocalAI/Kokoro model) in this
# voice; empty: the browser's own speech synthesis reads.
CHAT_TTS_MODEL = os.environ.get("CHAT_TTS_MODEL", "").strip()
CHAT_TTS_VOICE = os.environ.get("CHAT_TTS_VOICE", "").strip() or "alloy"
# Pictures: the `image` tool draws with this model on the server's /images/generations
# (dall-e-3, gpt-image-1, a LocalAI or ComfyUI bridge model); empty: no such tool. Each
# picture counts this many output tokens against budgets (OpenAI bills gpt-image-1's
# 1024x1024 medium picture as about 1,056 output tokens).
CHAT_IMAGE_MODEL = os.environ.get("CHAT_IMAGE_MODEL", "").strip()
CHAT_IMAGE_TOKENS = int(os.environ.get("CHAT_IMAGE_TOKENS", 1056))
# A model server that stays silent is given up on: no first byte of its answer within this
# many seconds, or nothing more for that many mid-stream. The reply is stored as failed
# (it says why) and the conversation takes the next message. 0 turns a limit off. A model on
# a CPU may read a long prompt for minutes before its first byte: the page says it waits.
CHAT_MODEL_FIRST_BYTE_TIMEOUT = float(os.environ.get("CHAT_MODEL_FIRST_BYTE_TIMEOUT", 300))
CHAT_MODEL_IDLE_TIMEOUT = float(os.environ.get("CHAT_MODEL_IDLE_TIMEOUT", 30))
CONTEXT_COMPRESSION_THRESHOLD = float(os.environ.get("CONTEXT_COMPRESSION_THRESHOLD", 0.7))
CONTEXT_COMPRESSION_TARGET = float(os.environ.get("CONTEXT_COMPRESSION_TARGET", 0.1))
MEMORY_MAX_MESSAGES = int(os.environ.get("MEMORY_MAX_MESSAGES", 10))
MEMORY_KEEP_RECENT = int(os.environ.get("MEMORY_KEEP_RECENT", 5))
MEMORY_MAX_SUMMARIES = int(os.environ.get("MEMORY_MAX_SUMMARIES", 3))
# Memories across conversations put into each turn's instructions (SPEC: Memories).
MEMORY_RECALL_K = int(os.environ.get("MEMORY_RECALL_K", 5))
# Older messages of the conversation recalled verbatim into a request: at most this many tokens.
MEMORY_RECALL_TOKENS = int(os.environ.get("MEMORY_RECALL_TOKENS", 600))
AGENT_MAX_ITERATIONS = int(os.environ.get("AGENT_MAX_ITERATIONS", 4))
CHAT_RATE_LIMIT = os.environ.get("CHAT_RATE_LIMIT", "30/m")
# Tokens (input + output of the replies) a user may use per calendar month (UTC); 0: no
# limit. Staff set per-user and per-group budgets in the admin (usage/budgets.py).
CHAT_MONTHLY_TOKEN_BUDGET = int(os.environ.get("CHAT_MONTHLY_TOKEN_BUDGET", 0))
# While a reply runs under a budget it holds its prompt (the last turn's tokens and the new
# message) plus this many tokens for its answer, so parallel sends cannot overshoot.
CHAT_BUDGET_RESERVE_TOKENS = int(os.environ.get("CHAT_BUDGET_RESERVE_TOKENS", 1024))
# Message searches per user (GET /search/messages, the list page's search): each reads
# every matching message, so a script cannot search in a loop.
CHAT_SEARCH_RATE_LIMIT = os.environ.get("CHAT_SEARCH_RATE_LIMIT", "60/m")
# A socket's `sync` requests per user (a page each; a client that asks in a loop is slowed).
CHAT_SYNC_RATE_LIMIT = os.environ.get("CHAT_SYNC_RATE_LIMIT", "120/m")
# What may wait unread for one socket (bytes); past it the socket is closed with 1013
# (try again later) and its client reconnects and syncs: a client that never reads
# cannot grow the process.
CHAT_SOCKET_BACKLOG_BYTES = int(os.environ.get("CHAT_SOCKET_BACKLOG_BYTES", 8 * 1024 * 1024))
MESSAGE_MAX_CHARS = int(os.environ.get("MESSAGE_MAX_CHARS", 32000))
# Attachments (SPEC "Attachments"): files under MEDIA_ROOT (a shared volume, or a
# django-storages backend, when several machines serve the app).
MEDIA_ROOT = Path(os.environ.get("CHAT_MEDIA_DIR", VAR_DIR / "media"))
MEDIA_URL = "/media/"  # never served as such: GET /api/v1/attachments/{id} checks the owner
ATTACHMENT_MAX_BYTES = int(os.environ.get("ATTACHMENT_MAX_BYTES", 10 * 1024 * 1024))
# Sensitive information in a user message (text/sensitive.py): "warn" (refused until the
# sender confirms), "block" (refused), "off".
SENSITIVE_CHECK = os.environ.get("SENSITIVE_CHECK", "warn")
if SENSITIVE_CHECK not in ("warn", "block", "off"):
    raise ImproperlyConfigured("SENSITIVE_CHECK must be warn, block or off.")
CONVERSATION_TITLE_MAX_CHARS = 200
# How fast the built-in offline model types (characters per second; 0 = all at once).
OFFLINE_MODEL_CHARS_PER_SECOND = float(os.environ.get("OFFLINE_MODEL_CHARS_PER_SECOND", 400))
# Conversations archived longer ago than this are purged by `manage.py purge_archived` (0: never).
CHAT_RETENTION_ARCHIVED_DAYS = int(os.environ.get("CHAT_RETENTION_ARCHIVED_DAYS", 0))
CHAT_IMPORT_MAX_BYTES = int(os.environ.get("CHAT_IMPORT_MAX_BYTES", 64 * 1024 * 1024))
# The largest import file (read one conversation at a time; a zip's uncompressed size counts).
CHAT_IMPORT_MAX_FILE_BYTES = int(os.environ.get("CHAT_IMPORT_MAX_FILE_BYTES", 1024 * 1024 * 1024))
CHAT_IMPORT_INLINE_BYTES = int(os.environ.get("CHAT_IMPORT_INLINE_BYTES", 4 * 1024 * 1024))
# A temporary conversation is deleted this long after its last socket closed, unless one
# opens again meanwhile (a reload); or a day after its last message (`purge_archived`).
CHAT_TEMPORARY_GRACE_SECONDS = float(os.environ.get("CHAT_TEMPORARY_GRACE_SECONDS", 60))
# The conversation summary is written automatically past either threshold (seed 004).
CHAT_AUTO_SUMMARY_MESSAGES = int(os.environ.get("CHAT_AUTO_SUMMARY_MESSAGES", 50))
CHAT_AUTO_SUMMARY_TOKENS = int(os.environ.get("CHAT_AUTO_SUMMARY_TOKENS", 10000))
# …and written again after this many more messages.
CHAT_AUTO_SUMMARY_EVERY = int(os.environ.get("CHAT_AUTO_SUMMARY_EVERY", 20))
# Where the LangGraph checkpointer keeps threads: the same PostgreSQL, or its own SQLite file.
CHECKPOINT_URL = os.environ.get("CHECKPOINT_URL") or (
    DATABASE_URL if DATABASE_URL.startswith("postgres") else str(VAR_DIR / "checkpoints.sqlite3")
)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # No API token secret reaches a log, whoever logs it (a library included).
    # An outage of PostgreSQL or Redis is logged once when it starts and once when it ends,
    # not as a traceback per request, socket and library retry (core/outages.py).
    "filters": {
        "redact_secrets": {"()": "core.redact.RedactSecrets"},
        "quiet_outages": {"()": "core.outages.QuietOutages"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "filters": ["quiet_outages", "redact_secrets"],
        }
    },
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {
        "httpx": {"level": "WARNING"},
        "daphne": {"level": "WARNING"},
        # Through the root's handler, filters included (not Django's own console handler).
        "django": {"level": "INFO"},
    },
}

# --- realtime replies (conversations/realtime) ------------------------------------
# Tokens are sent in chunks of this window (the first at once); never one frame per token.
# A running reply refreshes its heartbeat this often; one silent this long belonged to a
# process that died, and the next process that looks stores it as `interrupted`.
CHAT_RUN_HEARTBEAT_SECONDS = float(os.environ.get("CHAT_RUN_HEARTBEAT_SECONDS", 5))
CHAT_RUN_STALE_SECONDS = float(os.environ.get("CHAT_RUN_STALE_SECONDS", 30))

# --- knowledge base (knowledge/) ---------------------------------------------------
KNOWLEDGE_MAX_UPLOAD_BYTES = int(os.environ.get("KNOWLEDGE_MAX_UPLOAD_BYTES", 10 * 1024 * 1024))
KNOWLEDGE_ALLOWED_EXTENSIONS = (".txt", ".md", ".markdown", ".pdf")
# Chunks are about this many characters, and repeat this many from the chunk before.
KNOWLEDGE_CHUNK_CHARS = int(os.environ.get("KNOWLEDGE_CHUNK_CHARS", 1200))
KNOWLEDGE_CHUNK_OVERLAP = int(os.environ.get("KNOWLEDGE_CHUNK_OVERLAP", 200))
# Embeddings (knowledge/embeddings.py): an OpenAI-compatible /embeddings model when
# EMBEDDING_MODEL is set (EMBEDDING_BASE_URL / EMBEDDING_API_KEY default to the chat
# server's); otherwise the bundled multilingual model, which needs no server.
EMBEDDING_MODEL = os.environ.get("EMBEDDING_MODEL", "")
EMBEDDING_BASE_URL = os.environ.get("EMBEDDING_BASE_URL", "")
EMBEDDING_API_KEY = os.environ.get("EMBEDDING_API_KEY", "")
# An upload's chunks are embedded on a thread after the request (False: before answering).
KNOWLEDGE_EMBED_IN_BACKGROUND = os.environ.get("KNOWLEDGE_EMBED_IN_BACKGROUND", "1") != "0"

# --- tools (toolbox/, agent/tools/) --------------------------------------------------
# MCP servers from the environment, beside those staff register in the admin: a JSON list of
# {"name", "url", "headers"?} (streamable HTTP) or {"name", "command", "args"?, "env"?}
# (stdio: a process on this server). Checked when first read (toolbox/servers.py).
try:
    CHAT_MCP_SERVERS = json.loads(os.environ.get("CHAT_MCP_SERVERS", "") or "[]")
except ValueError as exc:
    raise ImproperlyConfigured(f"CHAT_MCP_SERVERS is not JSON: {exc}") from None
if not isinstance(CHAT_MCP_SERVERS, list):
    raise ImproperlyConfigured("CHAT_MCP_SERVERS must be a JSON list of servers.")
# An MCP call (or listing) that takes longer is abandoned; the step says so, the reply goes on.
CHAT_MCP_TIMEOUT = float(os.environ.get("CHAT_MCP_TIMEOUT", 20))
# Web search (SearXNG's JSON API) and reading pages; `read_url` refuses private addresses
# unless a host or CIDR is listed here.
WEB_SEARCH_URL = os.environ.get("WEB_SEARCH_URL", "").rstrip("/")
CHAT_FETCH_ALLOW = os.environ.get("CHAT_FETCH_ALLOW", "")
# Python in a sandbox (bubblewrap): off unless staff switch it on.
CHAT_PYTHON_SANDBOX = env_bool("CHAT_PYTHON_SANDBOX", False)
