# One image for web and worker. Java is needed by the worker's Spark driver (PySpark 4).
FROM python:3.11-slim-bookworm
RUN apt-get update \
 && apt-get install -y --no-install-recommends openjdk-17-jre-headless procps \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY pyproject.toml constraints.txt ./
COPY core core
COPY webapp webapp
COPY catalog catalog
COPY jobs jobs
COPY accounts accounts
COPY frontend frontend
COPY manage.py ./
RUN pip install --no-cache-dir -c constraints.txt .
ENV TESSERA_DATA_DIR=/data TESSERA_ALLOWED_HOSTS=* PORT=8000
EXPOSE 8000
CMD ["sh", "-c", "python manage.py migrate --noinput && python manage.py collectstatic --noinput -v 0 && gunicorn webapp.wsgi -c python:webapp.gunicorn_conf --bind 0.0.0.0:${PORT} --workers 4 --threads 4"]
