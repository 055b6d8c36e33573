"""Gunicorn settings of the web server (Dockerfile and docker-compose.yml: `gunicorn -c
config/gunicorn.py config.wsgi`). Environment variables override the numbers.

Threaded workers (gthread): the worker's main thread keeps telling the arbiter it is alive while a
request thread streams a large download (a 2,000,000-row sweep CSV takes minutes), so `timeout`
bounds a hung worker, not a long response; a request's own work is bounded by estimator.limits
(including the layout search's wall-clock budget). Request lines and headers are bounded too.
"""

import os

from config.env import env_int, env_str  # gunicorn puts its working directory (the repo) on sys.path

bind = env_str("GUNICORN_BIND", "0.0.0.0:8000")
workers = env_int("WEB_WORKERS", 3, minimum=1, maximum=64)
worker_class = "gthread"
threads = env_int("WEB_THREADS", 4, minimum=1, maximum=64)
timeout = env_int("WEB_TIMEOUT", 60, minimum=1)  # seconds without a heartbeat: the worker is replaced
graceful_timeout = env_int("WEB_GRACEFUL_TIMEOUT", 30, minimum=1)  # finish requests on restart
keepalive = 5
limit_request_line = 8190
limit_request_fields = 100
limit_request_field_size = 8190
max_requests = 2000  # recycle workers now and then (bounded memory growth)
max_requests_jitter = 200
accesslog = (
    os.environ.get("GUNICORN_ACCESS_LOG", "-") or None
)  # "" turns it off (so not env_str: blank is not unset)
