"""The OpenAPI security schemes of accounts.authentication: either spelling of the header will do."""

from __future__ import annotations

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = "accounts.authentication.ApiTokenAuthentication"
    name = ["bearerAuth", "tokenAuth"]

    def get_security_requirement(self, auto_schema):
        return [{"bearerAuth": []}, {"tokenAuth": []}]  # alternatives (OR), not both at once

    def get_security_definition(self, auto_schema):
        created = "Create a named token on the “API tokens” page after signing in."
        return [
            {
                "type": "http",
                "scheme": "bearer",
                "description": f"`Authorization: Bearer <token>`. {created}",
            },
            {
                "type": "apiKey",
                "in": "header",
                "name": "Authorization",
                "description": f"`Authorization: Token <token>` (the same tokens). {created}",
            },
        ]
