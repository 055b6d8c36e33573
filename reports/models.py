"""A saved estimate: what was asked, what the core answered, and with which engine and catalog.

The stored scenario, result and versions are never rewritten, so a share link opened next year shows
the numbers it showed on the day it was made.
"""

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from .tokens import new_share_token


class Estimate(models.Model):
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="estimates",
        verbose_name=_("owner"),
        help_text=_("Empty for anonymous estimates, which are reachable only through their share link."),
    )
    team = models.ForeignKey(
        "teams.Team",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="estimates",
        verbose_name=_("team"),
        help_text=_("Its members see the estimate too; empty: only the owner."),
    )
    price_book_version = models.ForeignKey(
        "pricebooks.PriceBookVersion",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="estimates",
        verbose_name=_("price book version"),
    )
    price_book = models.JSONField(
        _("price book used"),
        null=True,
        blank=True,
        help_text=_(
            "The book's prices as planned with (estimator.contract.price_book.PriceBook), kept with the report."
        ),
    )
    name = models.CharField(_("name"), max_length=200, blank=True)
    input = models.JSONField(
        _("input"), help_text=_("The scenario as submitted (recomputation starts here).")
    )
    scenario = models.JSONField(_("scenario"), help_text=_("The normalized scenario, every default filled."))
    result = models.JSONField(_("result"))
    engine_version = models.CharField(_("engine version"), max_length=40)
    catalog_version = models.CharField(_("catalog version"), max_length=40)
    share_token = models.CharField(
        _("share token"), max_length=64, unique=True, default=new_share_token, editable=False
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["owner", "-created_at"], name="estimate_owner_recent")]
        verbose_name = _("estimate")
        verbose_name_plural = _("estimates")

    def __str__(self) -> str:
        return self.name or f"Estimate {self.pk}"

    def get_absolute_url(self) -> str:
        return reverse("reports:report", args=[self.share_token])
