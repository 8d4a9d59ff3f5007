# Images of the QSG, built in stages from one base (docker-compose.yml picks the target):
#   qmgr       (the default) queue managers (qsg serve), the entry point (qsg gateway), the schema
#              migration (qsg db upgrade) and the user commands: Python only, no Java, no PySpark
#   analytics  the nightly job (qsg analytics run / schedule): the same plus Java and PySpark
# Both run as the unprivileged user qsg (uid 10001) and install the exact versions of
# constraints.txt.
#
# Build arguments:
#   QSG_BASE_IMAGE   a Debian bookworm image with python3.11 and venv (default: the public
#                    python:3.11-slim-bookworm; deploy/build-base-images.sh makes one from Debian's
#                    packages where no registry is reachable)
#   EXTRA_CA_CERTS   PEM text of extra CA certificates to trust, for sites whose proxy intercepts
#                    TLS to the package index: --build-arg EXTRA_CA_CERTS="$(cat corp-ca.pem)"
#                    (docker-compose passes QSG_EXTRA_CA_CERTS)
# bookworm, not trixie: the analytics stage needs openjdk-17, which trixie no longer has.
ARG QSG_BASE_IMAGE=python:3.11-slim-bookworm

FROM ${QSG_BASE_IMAGE} AS base
ARG EXTRA_CA_CERTS=""
# pip and every TLS client of the image trust the system store, plus the site's CAs when given.
# (one file per certificate, as update-ca-certificates wants them)
RUN if [ -n "$EXTRA_CA_CERTS" ]; then \
      printf '%s\n' "$EXTRA_CA_CERTS" | awk '/-----BEGIN CERTIFICATE-----/ { n++ } \
        n { print > ("/usr/local/share/ca-certificates/qsg-extra-" n ".crt") }' \
      && update-ca-certificates; \
    fi \
 && useradd --uid 10001 --user-group --create-home --shell /usr/sbin/nologin qsg \
 && mkdir -p /srv/qsg /activity /reports /mqlog \
 && chown qsg:qsg /srv/qsg /activity /reports /mqlog
ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt \
    PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 \
    PATH=/opt/qsg/bin:$PATH
WORKDIR /srv/qsg

# ---- build: the project and its dependencies in a venv (/opt/qsg), copied into the images ----
FROM base AS build
COPY constraints.txt pyproject.toml /tmp/src/
# Dependencies first (a layer that survives source changes), from pyproject's own list.
RUN python3 -m venv /opt/qsg \
 && pip install -c /tmp/src/constraints.txt setuptools wheel \
 && python3 -c "import tomllib; print('\n'.join(tomllib.load(open('/tmp/src/pyproject.toml', 'rb'))['project']['dependencies']))" \
      > /tmp/src/requirements.txt \
 && pip install -c /tmp/src/constraints.txt -r /tmp/src/requirements.txt
COPY README.md qsg_pymqi.py /tmp/src/
COPY app /tmp/src/app
COPY migrations /tmp/src/migrations
COPY spark_jobs /tmp/src/spark_jobs
RUN pip install --no-build-isolation --no-deps /tmp/src \
 && python3 -c "import app.cli, app.api.app, app.gateway, migrations" \
 && qsg --help >/dev/null

FROM build AS build-analytics
RUN pip install --no-build-isolation -c /tmp/src/constraints.txt "/tmp/src[analytics]" \
 && python3 -c "import pyspark, matplotlib, spark_jobs.activity_daily"

# ---- analytics: Java for PySpark (Spark 4 needs 17 or newer) ----
FROM base AS analytics
# openjdk's post-install links its man pages and fails where slim images have no man1 folder.
RUN mkdir -p /usr/share/man/man1 \
 && apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends openjdk-17-jre-headless \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build-analytics /opt/qsg /opt/qsg
USER qsg
CMD ["qsg", "analytics", "schedule"]

# ---- qmgr (the default target, last): no Java, no PySpark ----
FROM base AS qmgr
# redis-server: each queue manager's page set (its private queues), which qsg serve starts by
# itself under QSG_MQLOG_DIR (docs/explanation/cf-connectivity.md)
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends redis-server \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /opt/qsg /opt/qsg
USER qsg
ENV QSG_HOST=0.0.0.0 QSG_PORT=9441
EXPOSE 9441
CMD ["qsg", "serve"]
