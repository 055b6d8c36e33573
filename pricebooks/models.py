"""Price books: a team's named price list, versioned. A version is never changed once saved;
editing a book adds a version, so an estimate that used version N keeps pointing at it."""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from teams.models import Team


class PriceBook(models.Model):
    team = models.ForeignKey(
        Team, on_delete=models.CASCADE, related_name="price_books", verbose_name=_("team")
    )
    name = models.CharField(_("name"), max_length=100)
    slug = models.SlugField(_("slug"), max_length=50, help_text=_("Names the book in references: team/book."))
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        ordering = ["team__name", "name", "id"]
        constraints = [models.UniqueConstraint(fields=["team", "slug"], name="pricebook_slug_per_team")]
        verbose_name = _("price book")
        verbose_name_plural = _("price books")

    def __str__(self) -> str:
        return f"{self.team.slug}/{self.slug}"

    @property
    def reference(self) -> str:
        return f"{self.team.slug}/{self.slug}"

    def latest(self) -> "PriceBookVersion | None":
        return self.versions.order_by("-number").first()


class ImmutableVersionError(Exception):
    """Raised on an attempt to change a saved price-book version."""


class PriceBookVersion(models.Model):
    class Currency(models.TextChoices):
        USD = "USD", "USD"
        CNY = "CNY", "CNY"

    book = models.ForeignKey(
        PriceBook, on_delete=models.CASCADE, related_name="versions", verbose_name=_("price book")
    )
    number = models.PositiveIntegerField(_("version"))
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        verbose_name=_("created by"),
    )
    currency = models.CharField(_("currency"), max_length=3, choices=Currency.choices, default=Currency.USD)
    price_date = models.DateField(_("price date"), help_text=_("The date the prices are quoted for."))
    prices = models.JSONField(
        _("prices"),
        help_text=_(
            "Validated by estimator.contract.price_book.PriceTable; only what differs from the catalog."
        ),
    )

    class Meta:
        ordering = ["book", "-number"]
        constraints = [models.UniqueConstraint(fields=["book", "number"], name="pricebookversion_once")]
        verbose_name = _("price book version")
        verbose_name_plural = _("price book versions")

    def __str__(self) -> str:
        return f"{self.book} v{self.number}"

    def save(self, *args, **kwargs) -> None:
        if not self._state.adding:
            raise ImmutableVersionError("a price book version never changes; save a new version instead")
        super().save(*args, **kwargs)

    def document(self) -> dict:
        """The book as the core takes it (estimator.contract.price_book.PriceBook), and as an estimate stores it."""
        return {
            "name": self.book.name,
            "version": self.number,
            "currency": self.currency,
            "price_date": self.price_date.isoformat(),
            "prices": self.prices,
        }
