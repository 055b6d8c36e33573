"""REST API of the pricebooks app (views, serializers, urls), on the shared base in api/."""
