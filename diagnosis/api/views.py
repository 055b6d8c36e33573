"""POST /api/v1/diagnose: a measured run against the model's breakdown of the same run."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from api.exceptions import ErrorSerializer
from api.parsers import StrictJSONParser
from diagnosis.services import run_diagnosis


class DiagnoseView(APIView):
    """Anyone may ask (throttled like an estimate); nothing is stored."""

    parser_classes = [StrictJSONParser]
    permission_classes = [AllowAny]

    @extend_schema(
        operation_id="diagnose",
        summary="Diagnose a measured run",
        description="The body is a scenario with the run's `cluster.cards` (its layout in `parallelism`; what is "
        "not fixed is searched; `training.tokens` may be left out) plus `measured`: `step_time_s` and, where a "
        "profiler gave them, `compute_s`, `communication_s` (exposed communication wait) and `data_loading_s`, "
        "seconds per step. The answer compares them term by term with the model's breakdown of the same run "
        "(`terms`) and lists `findings` ({code, severity, message, params}); a communication wait above 30% of "
        "the step is `diagnose.network` (the source article, section 5.1). See docs/diagnose.md.",
        request={"application/json": OpenApiTypes.OBJECT},
        responses={200: OpenApiTypes.OBJECT, 400: ErrorSerializer, 429: ErrorSerializer},
    )
    def post(self, request):
        return Response(run_diagnosis(data=request.data, user=request.user))
