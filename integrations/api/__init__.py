"""REST API of the integrations app (views, serializers, urls), on the shared base in api/."""
