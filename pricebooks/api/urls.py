from django.urls import path

from . import views

app_name = "pricebooks_api"

urlpatterns = [
    path("price-books", views.PriceBookListCreateView.as_view(), name="list"),
    path("price-books/<int:pk>", views.PriceBookDetailView.as_view(), name="detail"),
    path("price-books/<int:pk>/versions", views.PriceBookVersionsView.as_view(), name="versions"),
    path("price-books/<int:pk>/versions/<int:number>", views.PriceBookVersionView.as_view(), name="version"),
]
