from django.urls import path

from . import views

urlpatterns = [
    path("", views.index, name="documents"),
    path("questions/", views.saved_questions, name="saved_questions"),
    path("<uuid:document_id>/", views.detail, name="document"),
    path("<uuid:document_id>/delete/", views.delete, name="document_delete"),
]
