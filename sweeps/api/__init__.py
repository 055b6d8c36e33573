"""REST API of the sweeps app (views, serializers, urls), on the shared base in api/."""
