"""REST API of the reports app (views, serializers, urls), on the shared base in api/."""
