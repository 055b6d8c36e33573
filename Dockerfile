# ClusterPlan: one image for the web server, the Celery workers and the beat scheduler.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    CLUSTERPLAN_VAR_DIR=/app/var \
    DJANGO_SETTINGS_MODULE=config.settings

WORKDIR /app
COPY requirements.txt .
RUN pip install -r requirements.txt

COPY . .
# Static files (Plotly, Swagger UI and Redoc come from the installed packages: no CDN at run time).
RUN SECRET_KEY=build-only STATIC_MANIFEST=1 python manage.py collectstatic --noinput \
    && rm -rf /app/var && mkdir -p /app/var \
    && useradd --system --uid 1000 --home /app clusterplan && chown -R clusterplan /app/var
USER clusterplan

EXPOSE 8000
# threaded workers, 60 s heartbeat timeout, bounded request lines: see config/gunicorn.py
CMD ["gunicorn", "-c", "config/gunicorn.py", "config.wsgi"]
