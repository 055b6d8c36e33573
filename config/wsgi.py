import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()

# A worker pays its first-use costs (URLconf, templates, translations, Plotly, the contract's
# validators) here, before gunicorn lets it accept a request (config.warmup, issue 27); then the
# objects made so far leave the garbage collector's full passes (config.warmup.freeze_heap).
from config.warmup import freeze_heap, warm_up  # noqa: E402 (after the app: warm_up needs Django set up)

warm_up()
freeze_heap()
