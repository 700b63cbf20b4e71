# One image for web and worker. Java is needed by the worker's Spark driver (PySpark 4).

# The browser UI, built with Node; only its dist/ goes into the image.
FROM node:20-bookworm-slim AS ui
WORKDIR /build/frontend
COPY frontend/package.json frontend/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY frontend/ ./
# The editor's completion reads Spark's built-in function list from the planner.
COPY core/planner/spark_builtins.txt /build/core/planner/spark_builtins.txt
RUN npm run build

# Delta Lake's jars (pom.xml), resolved from Maven Central at build time: Spark starts offline.
FROM maven:3.9-eclipse-temurin-17 AS jars
WORKDIR /build
COPY pom.xml ./
RUN mvn -q -B dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory=/build/jars

FROM python:3.11-slim-bookworm
RUN apt-get update \
 && apt-get install -y --no-install-recommends openjdk-17-jre-headless procps \
 && rm -rf /var/lib/apt/lists/*
# Web and workers run as an unprivileged user (docs/security.md §6): Spark executes users'
# SQL in the worker, so what that process may touch is what a user could reach. It owns
# only the data dir (/data: database files, broker, warehouse, results, storage roots).
RUN groupadd --system --gid 10001 tessera \
 && useradd --system --uid 10001 --gid tessera --create-home --home-dir /home/tessera \
      --shell /usr/sbin/nologin tessera \
 && mkdir -p /data \
 && chown tessera:tessera /data
WORKDIR /app
COPY pyproject.toml constraints.txt ./
# Every room (the packages pyproject.toml's packages.find includes).
COPY core core
COPY webapp webapp
COPY accounts accounts
COPY audit audit
COPY catalog catalog
COPY jobs jobs
COPY sessions sessions
COPY results results
COPY tabledata tabledata
COPY engine engine
COPY workbench workbench
COPY schedules schedules
COPY dashboards dashboards
COPY hiveserver2 hiveserver2
COPY flightsql flightsql
COPY tessera_udfs tessera_udfs
COPY tessera_pipelines tessera_pipelines
COPY --from=ui /build/frontend/dist frontend/dist
COPY manage.py ./
# [spark]: the worker's PySpark (and Spark Connect client); the image also runs the Spark
# master, workers and Connect server (docker-compose.yml), from the same wheel.
RUN pip install --no-cache-dir -c constraints.txt '.[spark]'
# Where engine/spark_config.py looks for them: <sys.prefix>/share/tessera/jars.
COPY --from=jars /build/jars /usr/local/share/tessera/jars
ENV TESSERA_DATA_DIR=/data TESSERA_ALLOWED_HOSTS=* PORT=8000
# The code stays root-owned and read-only to the service user.
USER tessera:tessera
EXPOSE 8000 10009 32010
CMD ["sh", "-c", "python manage.py migrate --noinput && python manage.py collectstatic --noinput -v 0 && gunicorn webapp.wsgi -c python:webapp.gunicorn_conf --bind 0.0.0.0:${PORT} --workers 4 --threads 16"]
