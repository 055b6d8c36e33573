"""REST API of the accounts app (views, serializers, urls), on the shared base in api/."""
