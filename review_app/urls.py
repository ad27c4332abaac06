from django.urls import path

from review_app import views

app_name = "review"

urlpatterns = [
    path("", views.home, name="home"),
    path("<slug:slug>/", views.not_built, name="page"),
]
