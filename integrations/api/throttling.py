"""The API's rate limits for a batch: a batch of N scenarios spends N requests of the caller's
budget (api.throttling), since it does the work of N estimates; otherwise batching would dodge
the limit N-fold."""

from __future__ import annotations

from rest_framework.throttling import SimpleRateThrottle

from api.throttling import AnonRateThrottle, UserRateThrottle


def scenario_count(request) -> int:
    try:
        scenarios = request.data.get("scenarios") if request.method == "POST" else None
    except Exception:  # a body that does not parse: the view answers 400 for it
        return 1
    return len(scenarios) if isinstance(scenarios, list) and scenarios else 1


class _PerScenario(SimpleRateThrottle):
    """Mixed in before a rate of api.throttling: a request weighs its scenario count."""

    weight = 1
    num_requests: int | None  # set by SimpleRateThrottle.__init__ (not in the stubs)
    duration: int | None

    def allow_request(self, request, view) -> bool:
        if self.num_requests is not None:
            self.weight = max(1, min(scenario_count(request), self.num_requests))
            self.num_requests -= self.weight - 1  # room for the whole batch, not for one request
        return super().allow_request(request, view)

    def throttle_success(self) -> bool:
        self.history[:0] = [self.now] * self.weight
        self.cache.set(self.key, self.history, self.duration)
        return True


class BatchAnonRateThrottle(_PerScenario, AnonRateThrottle):
    pass


class BatchUserRateThrottle(_PerScenario, UserRateThrottle):
    pass
