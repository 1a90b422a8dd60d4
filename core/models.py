"""core has no models; this module makes Django send it `post_migrate` (core/apps.py grants)."""
