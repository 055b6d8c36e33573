"""The parallel layout: the problem, candidate enumeration, per-card memory, the search and the batched search; step time in steptime/."""
