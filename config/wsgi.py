import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()

from memory_app.safety import prepare as prepare_scanner  # noqa: E402

prepare_scanner()
