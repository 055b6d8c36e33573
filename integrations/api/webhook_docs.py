"""The notifications in the OpenAPI document (its 3.1 `webhooks` section, settings WEBHOOKS): what
a receiver of a callback gets, from the receiver's side."""

from drf_spectacular.utils import OpenApiResponse, OpenApiWebhook, extend_schema

from .serializers import BatchEventSerializer, SweepEventSerializer

SIGNED = (
    " Signed as Standard Webhooks specifies: headers webhook-id (the same on every retry), "
    "webhook-timestamp (Unix seconds) and webhook-signature (v1,<base64 HMAC-SHA256 with your secret "
    "from GET /api/v1/webhooks/secret over '<id>.<timestamp>.<body>'>). Answer 2xx within 10 s; "
    "anything else is retried with exponential backoff (10 attempts)."
)
RECEIVED = {200: OpenApiResponse(description="Received (any 2xx)")}

sweep_finished = OpenApiWebhook(
    name="sweep_finished",
    decorator=extend_schema(
        summary="A sweep with a callback is done, failed or cancelled",
        description="POSTed to the sweep's callback.url." + SIGNED,
        request=SweepEventSerializer,
        responses=RECEIVED,
    ),
)

batch_done = OpenApiWebhook(
    name="batch_done",
    decorator=extend_schema(
        summary="A batch with a callback is stored",
        description="POSTed to the batch's callback.url." + SIGNED,
        request=BatchEventSerializer,
        responses=RECEIVED,
    ),
)
