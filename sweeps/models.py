"""A sweep: a base scenario, its axes, and the results of its chunks.

Storage: one `SweepChunk` row per chunk of scenarios (thousands each), holding the core's result
arrays as a compressed NumPy `.npz` in a BinaryField; unique on (sweep, index), so a chunk that a
redelivered task computes twice is stored once. Scenario inputs are not stored per row: scenario
`i` is decoded from `i` and the axes (estimator.contract.sweep.decode). A 1,000,000-scenario sweep is about
40 rows and tens of megabytes, not a million rows.
"""

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from reports.tokens import new_share_token


class Sweep(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", _("queued")
        RUNNING = "running", _("running")
        DONE = "done", _("done")
        FAILED = "failed", _("failed")
        CANCELLED = "cancelled", _("cancelled")

    ACTIVE = (Status.QUEUED, Status.RUNNING)

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="sweeps",
        verbose_name=_("owner"),
        help_text=_("Empty for anonymous sweeps, which are reachable only through their share link."),
    )
    team = models.ForeignKey(
        "teams.Team",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="sweeps",
        verbose_name=_("team"),
        help_text=_("Its members see the sweep too; empty: only the owner."),
    )
    price_books = models.JSONField(
        _("price books"),
        default=dict,
        blank=True,
        help_text=_("The price books the base or an axis names, resolved at creation: {reference: book}."),
    )
    client_ip = models.GenericIPAddressField(
        _("client IP"), null=True, blank=True, help_text=_("Anonymous limits")
    )
    name = models.CharField(_("name"), max_length=200, blank=True)
    base = models.JSONField(
        _("base scenario"), help_text=_("The base scenario, fields excluded by an axis removed.")
    )
    axes = models.JSONField(
        _("axes"), help_text=_('[{"field": dotted path, "values": [...]}], first axis slowest.')
    )
    status = models.CharField(
        _("status"), max_length=12, choices=Status.choices, default=Status.QUEUED, db_index=True
    )
    total = models.BigIntegerField(_("scenarios"))
    done = models.BigIntegerField(_("scenarios done"), default=0)
    chunk_size = models.PositiveIntegerField(_("chunk size"))
    chunks_total = models.PositiveIntegerField(_("chunks"))
    chunks_done = models.PositiveIntegerField(_("chunks done"), default=0)
    compute_s = models.FloatField(
        _("compute seconds"), default=0.0, help_text=_("Sum over chunks of core time")
    )
    requeues = models.PositiveIntegerField(
        _("re-queues"), default=0, help_text=_("Watchdog re-queues of lost chunks")
    )
    error = models.TextField(_("error"), blank=True)
    summary = models.JSONField(_("summary"), null=True, blank=True)
    share_token = models.CharField(
        _("share token"), max_length=64, unique=True, default=new_share_token, editable=False
    )
    engine_version = models.CharField(_("engine version"), max_length=40)
    catalog_version = models.CharField(_("catalog version"), max_length=40, blank=True)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True, db_index=True)
    started_at = models.DateTimeField(_("started at"), null=True, blank=True)
    finished_at = models.DateTimeField(_("finished at"), null=True, blank=True)
    progress_at = models.DateTimeField(
        _("last progress"), null=True, blank=True, help_text=_("Watchdog clock")
    )
    requeued_at = models.DateTimeField(_("last re-queue"), null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["owner", "status"], name="sweep_owner_status")]
        verbose_name = _("sweep")
        verbose_name_plural = _("sweeps")

    def __str__(self) -> str:
        return self.name or f"Sweep {self.pk}"

    @property
    def is_active(self) -> bool:
        return self.status in self.ACTIVE

    def get_absolute_url(self) -> str:
        return reverse("sweeps_pages:report", args=[self.share_token])


class SweepChunk(models.Model):
    sweep = models.ForeignKey(Sweep, on_delete=models.CASCADE, related_name="chunks")
    index = models.PositiveIntegerField(_("index"))
    start = models.BigIntegerField(_("first scenario"))
    stop = models.BigIntegerField(_("end scenario (exclusive)"))
    data = models.BinaryField(_("results"), help_text=_("Compressed .npz of the core's summary arrays"))
    digest = models.JSONField(
        _("digest"), default=dict, help_text=_("Best rows and Pareto candidates of the chunk")
    )
    compute_s = models.FloatField(_("compute seconds"), default=0.0)
    worker = models.CharField(_("worker"), max_length=200, blank=True)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        ordering = ["sweep", "index"]
        constraints = [models.UniqueConstraint(fields=["sweep", "index"], name="sweepchunk_once")]
        verbose_name = _("sweep chunk")
        verbose_name_plural = _("sweep chunks")

    def __str__(self) -> str:
        return f"{self.sweep_id}/{self.index}"


class ChunkLease(models.Model):
    """A worker's claim on one chunk while it computes it: renewed between sub-batches, deleted
    when the chunk is stored. The watchdog re-queues only chunks whose lease expired (its holder
    died or hung), and a second worker that receives the chunk while the lease is live leaves it
    alone, so no chunk is computed by two workers at once."""

    sweep = models.ForeignKey(Sweep, on_delete=models.CASCADE, related_name="leases")
    index = models.PositiveIntegerField(_("index"))
    holder = models.CharField(_("holder"), max_length=240)
    expires_at = models.DateTimeField(_("expires at"), db_index=True)
    renewed_at = models.DateTimeField(_("renewed at"))
    done = models.BigIntegerField(_("scenarios computed"), default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["sweep", "index"], name="chunklease_once")]
        verbose_name = _("chunk lease")
        verbose_name_plural = _("chunk leases")

    def __str__(self) -> str:
        return f"{self.sweep_id}/{self.index} by {self.holder}"
