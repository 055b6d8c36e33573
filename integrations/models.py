"""Models of the integrations app: batches of quotes, idempotency records, and webhooks (the
signing secret of each user, a callback per sweep or batch, and every delivery attempt)."""

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from api.schema import MAX_URL_CHARS
from reports.models import Estimate
from reports.tokens import new_share_token
from sweeps.models import Sweep


class BatchStatus(models.TextChoices):
    QUEUED = "queued", _("queued")
    RUNNING = "running", _("running")
    DONE = "done", _("done")


class Batch(models.Model):
    """One POST /api/v1/estimates/batch: its scenarios' estimates (or errors), in order. Planned by
    a Celery task (integrations.batch_work) under a lease, item by item, so a worker that dies
    leaves the rest to the next one and no item is planned twice."""

    Status = BatchStatus
    ACTIVE = (BatchStatus.QUEUED, BatchStatus.RUNNING)

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="batches",
        verbose_name=_("owner"),
        help_text=_("Empty for anonymous batches, which are reachable only through their share link."),
    )
    name = models.CharField(_("name"), max_length=200, blank=True)
    share_token = models.CharField(
        _("share token"), max_length=64, unique=True, default=new_share_token, editable=False
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True, db_index=True)
    status = models.CharField(
        _("status"), max_length=12, choices=Status.choices, default=Status.DONE, db_index=True
    )
    scenarios = models.JSONField(_("scenarios"), default=list, blank=True, help_text=_("As submitted"))
    team_choice = models.CharField(
        _("team asked for"),
        max_length=100,
        null=True,
        blank=True,
        help_text=_("The request's ?team= (empty: only the owner; null: the default)"),
    )
    client_ip = models.GenericIPAddressField(
        _("client IP"), null=True, blank=True, help_text=_("Anonymous limits")
    )
    lease_holder = models.CharField(_("lease holder"), max_length=100, blank=True)
    lease_expires_at = models.DateTimeField(_("lease expires at"), null=True, blank=True)
    progress_at = models.DateTimeField(_("last progress"), null=True, blank=True)
    finished_at = models.DateTimeField(_("finished at"), null=True, blank=True)
    requeues = models.PositiveIntegerField(_("re-queues"), default=0)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["owner", "status"], name="batch_owner_status")]
        verbose_name = _("batch")
        verbose_name_plural = _("batches")

    def __str__(self) -> str:
        return self.name or f"Batch {self.pk}"

    def get_absolute_url(self) -> str:
        return reverse("integrations_pages:batch", args=[self.share_token])


class BatchItem(models.Model):
    """Scenario `index` of a batch: its estimate, or the errors (field paths `scenarios.<index>.…`)."""

    batch = models.ForeignKey(Batch, on_delete=models.CASCADE, related_name="items")
    index = models.PositiveIntegerField(_("index"))
    name = models.CharField(_("name"), max_length=200, blank=True)
    status = models.PositiveSmallIntegerField(
        _("status"), help_text=_("202 while waiting, 201 planned, or the error's HTTP status")
    )
    estimate = models.ForeignKey(
        Estimate, null=True, blank=True, on_delete=models.SET_NULL, related_name="batch_items"
    )
    errors = models.JSONField(_("errors"), default=list, blank=True)

    class Meta:
        ordering = ["batch", "index"]
        constraints = [models.UniqueConstraint(fields=["batch", "index"], name="batchitem_once")]
        verbose_name = _("batch item")
        verbose_name_plural = _("batch items")

    def __str__(self) -> str:
        return f"{self.batch_id}/{self.index}"


class IdempotencyRecord(models.Model):
    """The first response to a POST carrying an Idempotency-Key, per caller (a user, or the client
    address of anonymous requests). Unique on (scope, key): of two concurrent requests with one
    key, one inserts the record and runs; the other finds it (integrations.idempotency)."""

    scope = models.CharField(_("caller"), max_length=80)
    key = models.CharField(_("key"), max_length=255)
    fingerprint = models.CharField(_("request fingerprint"), max_length=64)
    path = models.CharField(_("path"), max_length=500)
    status_code = models.PositiveSmallIntegerField(
        _("status"), null=True, blank=True, help_text=_("Empty while the first request runs")
    )
    body = models.BinaryField(_("body"), default=b"")
    content_type = models.CharField(_("content type"), max_length=200, blank=True)
    location = models.CharField(_("location"), max_length=2000, blank=True)
    created_at = models.DateTimeField(_("created at"), db_index=True)
    lease_expires_at = models.DateTimeField(
        _("lease expires at"),
        null=True,
        blank=True,
        help_text=_("While the first request runs, renewed by its heartbeat; past it, the key is free"),
    )

    class Meta:
        constraints = [models.UniqueConstraint(fields=["scope", "key"], name="idempotency_once")]
        verbose_name = _("idempotency record")
        verbose_name_plural = _("idempotency records")

    def __str__(self) -> str:
        return f"{self.scope} {self.key}"


class SigningSecret(models.Model):
    """A user's webhook signing secret (Standard Webhooks: "whsec_" + base64 of 32 random bytes).
    Stored as is: signing needs it. After a rotation the previous one also signs for a while, so
    receivers can switch without missing a notification."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="webhook_secret"
    )
    secret = models.CharField(_("secret"), max_length=100)
    previous = models.CharField(_("previous secret"), max_length=100, blank=True)
    created_at = models.DateTimeField(_("created at"))

    class Meta:
        verbose_name = _("webhook signing secret")
        verbose_name_plural = _("webhook signing secrets")

    def __str__(self) -> str:
        return f"signing secret of {self.user_id}"


class CallbackStatus(models.TextChoices):
    WAITING = "waiting", _("waiting for the event")
    PENDING = "pending", _("being delivered")
    DELIVERED = "delivered", _("delivered")
    FAILED = "failed", _("failed")


class Callback(models.Model):
    """A notification asked for by a sweep or a batch: where to, and, once fired, what (the event,
    its id and body are fixed then, so every retry sends the same message)."""

    Status = CallbackStatus

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="callbacks")
    url = models.CharField(_("URL"), max_length=MAX_URL_CHARS)
    base_url = models.CharField(
        _("site address"), max_length=500, help_text=_("Where links in the notification point")
    )
    sweep = models.OneToOneField(
        Sweep, null=True, blank=True, on_delete=models.SET_NULL, related_name="callback"
    )
    batch = models.OneToOneField(
        Batch, null=True, blank=True, on_delete=models.SET_NULL, related_name="callback"
    )
    status = models.CharField(
        _("status"), max_length=12, choices=Status.choices, default=Status.WAITING, db_index=True
    )
    event_id = models.CharField(_("event id"), max_length=64, blank=True)
    event_type = models.CharField(_("event"), max_length=40, blank=True)
    payload = models.TextField(_("body"), blank=True, help_text=_("The JSON sent, byte for byte"))
    attempts = models.PositiveSmallIntegerField(_("attempts"), default=0)
    next_attempt_at = models.DateTimeField(
        _("next attempt"), null=True, blank=True, help_text=_("Housekeeping re-sends one overdue by far")
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    fired_at = models.DateTimeField(_("fired at"), null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["owner", "-created_at"], name="callback_owner_recent")]
        verbose_name = _("webhook")
        verbose_name_plural = _("webhooks")

    def __str__(self) -> str:
        return f"{self.event_type or 'callback'} -> {self.url}"


class DeliveryAttempt(models.Model):
    callback = models.ForeignKey(Callback, on_delete=models.CASCADE, related_name="deliveries")
    attempt = models.PositiveSmallIntegerField(_("attempt"))
    started_at = models.DateTimeField(_("started at"))
    finished_at = models.DateTimeField(
        _("finished at"), null=True, blank=True, help_text=_("Empty: the attempt never finished")
    )
    duration_ms = models.PositiveIntegerField(_("duration (ms)"), null=True, blank=True)
    status_code = models.PositiveSmallIntegerField(_("status"), null=True, blank=True)
    error = models.CharField(_("error"), max_length=500, blank=True)
    response_excerpt = models.CharField(_("response excerpt"), max_length=500, blank=True)

    class Meta:
        ordering = ["callback", "attempt"]
        constraints = [models.UniqueConstraint(fields=["callback", "attempt"], name="deliveryattempt_once")]
        verbose_name = _("delivery attempt")
        verbose_name_plural = _("delivery attempts")

    def __str__(self) -> str:
        return f"{self.callback_id} #{self.attempt}"

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300
