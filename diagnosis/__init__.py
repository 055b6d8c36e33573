"""Diagnose a measured training run (POST /api/v1/diagnose and the /diagnose/ page): an adapter over
estimator.plan.diagnose: validate, call the core, render its codes in the reader's language."""
