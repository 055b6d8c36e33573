from django.apps import AppConfig


class IntegrationsConfig(AppConfig):
    """What a quoting system needs around the estimate API: batches, idempotent POSTs, webhooks."""

    name = "integrations"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Celery tasks registered in every process (web too: they are sent by name), and the
        # receiver that turns a finished sweep into a webhook notification.
        from . import receivers, tasks  # noqa: F401
