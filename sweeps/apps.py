from django.apps import AppConfig


class SweepsConfig(AppConfig):
    name = "sweeps"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # register the Celery tasks in every process (web too), so services can send them by name
        from . import tasks  # noqa: F401
