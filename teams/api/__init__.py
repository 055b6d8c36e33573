"""REST API of the teams app (views, serializers, urls), on the shared base in api/."""
