from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # drf-spectacular finds authentication extensions by import: the OpenAPI document then
        # describes both spellings of the Authorization header.
        from .api import schema  # noqa: F401
