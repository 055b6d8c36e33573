"""The diagnosis REST API: POST /api/v1/diagnose."""
