from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PriceBooksConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "pricebooks"
    verbose_name = _("price books")
