"""Celery app. Broker: Redis when REDIS_URL is set, otherwise kombu's filesystem transport
(no server needed) under var/broker, so `make run` works on a fresh clone."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("clusterplan")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
