from django.apps import AppConfig


class ReportsConfig(AppConfig):
    name = "reports"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        """The apps below reports (price books, teams) word the core's field errors through
        api.field_text with this app's catalogue."""
        from api.field_text import register

        from .messages import scenario_error

        register(scenario_error)
