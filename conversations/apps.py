from django.apps import AppConfig


class ConversationsConfig(AppConfig):
    name = "conversations"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.db.models.signals import post_delete

        from .attachments import remove_file_after_delete
        from .models import Attachment

        # An attachment goes with its message or conversation (a cascade): its file too.
        post_delete.connect(remove_file_after_delete, sender=Attachment)
