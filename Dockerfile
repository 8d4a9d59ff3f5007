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
#   EXTRA_CA_CERTS   PEM text of extra CA certificates, for sites whose proxy intercepts TLS to the
#                    package index: --build-arg EXTRA_CA_CERTS="$(cat corp-ca.pem)" (docker-compose
#                    passes QSG_EXTRA_CA_CERTS). Only the builder stages trust them, to run pip: the
#                    runtime images (qmgr, analytics) start from "base", which never sees them, so
#                    the site's CA is neither in their trust store nor in their history. (Not a
#                    BuildKit secret: docker-compose v1 passes no build secrets and runs the classic
#                    builder, which has no RUN --mount.)
#
# Layers that survive source changes: the runtime images copy the dependencies' venv from the
# builder stages deps / deps-analytics (built before any source is copied), then install the
# project's own wheel (stage build) on top, offline. A rebuild after a source change makes a new
# wheel and new top layers of a few MB; the venvs (PySpark's 1 GB) are the cached layers again, and
# the images the rebuild replaces differ from the new ones by those few MB only.
# The builder stages carry the label qsg-emulator.stage=build. The classic builder (Debian's
# docker.io 20.10, docker-compose v1) keeps each as an untagged image: its cache.
#   docker image prune -f --filter label=qsg-emulator.stage=build      removes them (and the cache)
# BuildKit keeps no such images (its cache is "Build Cache" in docker system df).
# bookworm, not trixie: the analytics stage needs openjdk-17, which trixie no longer has.
ARG QSG_BASE_IMAGE=python:3.11-slim-bookworm

# ---- base: what every image starts from (the runtime images too): no site CA, no build tools ----
FROM ${QSG_BASE_IMAGE} AS base
LABEL qsg-emulator.stage=runtime
RUN useradd --uid 10001 --user-group --create-home --shell /usr/sbin/nologin qsg \
 && mkdir -p /srv/qsg /activity /reports /mqlog \
 && chown qsg:qsg /srv/qsg /activity /reports /mqlog
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 \
    PATH=/opt/qsg/bin:$PATH
WORKDIR /srv/qsg

# ---- deps: the site's CAs (pip trusts the system store, plus them when given) and the
# dependencies in a venv (/opt/qsg), from pyproject's own list: layers that survive source changes
FROM base AS deps
LABEL qsg-emulator.stage=build
ARG EXTRA_CA_CERTS=""
ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt
# (one file per certificate, as update-ca-certificates wants them)
RUN if [ -n "$EXTRA_CA_CERTS" ]; then \
      printf '%s\n' "$EXTRA_CA_CERTS" | awk '/-----BEGIN CERTIFICATE-----/ { n++ } \
        n { print > ("/usr/local/share/ca-certificates/qsg-extra-" n ".crt") }' \
      && update-ca-certificates; \
    fi
COPY constraints.txt pyproject.toml /tmp/src/
RUN python3 -m venv /opt/qsg \
 && pip install -c /tmp/src/constraints.txt setuptools wheel \
 && python3 -c "import tomllib; print('\n'.join(tomllib.load(open('/tmp/src/pyproject.toml', 'rb'))['project']['dependencies']))" \
      > /tmp/src/requirements.txt \
 && pip install -c /tmp/src/constraints.txt -r /tmp/src/requirements.txt

# the analytics extra's dependencies (PySpark, matplotlib), also before the sources
FROM deps AS deps-analytics
RUN python3 -c "import tomllib; print('\n'.join(tomllib.load(open('/tmp/src/pyproject.toml', 'rb'))['project']['optional-dependencies']['analytics']))" \
      > /tmp/src/requirements-analytics.txt \
 && pip install -c /tmp/src/constraints.txt -r /tmp/src/requirements-analytics.txt

# ---- build: the project's own wheel (its sources change; its dependencies are in the venvs) ----
FROM deps AS build
COPY README.md qsg_pymqi.py /tmp/src/
COPY app /tmp/src/app
COPY migrations /tmp/src/migrations
COPY spark_jobs /tmp/src/spark_jobs
RUN pip wheel --no-build-isolation --no-deps --wheel-dir /tmp/wheels /tmp/src

# ---- analytics: Java for PySpark (Spark 4 needs 17 or newer) ----
FROM base AS analytics
# openjdk's post-install links its man pages and fails where slim images have no man1 folder.
RUN mkdir -p /usr/share/man/man1 \
 && apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends openjdk-17-jre-headless \
 && rm -rf /var/lib/apt/lists/*
COPY --from=deps-analytics /opt/qsg /opt/qsg
COPY --from=build /tmp/wheels /tmp/wheels
RUN pip install --no-index --no-deps /tmp/wheels/*.whl \
 && rm -rf /tmp/wheels \
 && python3 -c "import app.cli, pyspark, matplotlib, spark_jobs.activity_daily" \
 && qsg --help >/dev/null
USER qsg
CMD ["qsg", "analytics", "schedule"]

# ---- qmgr (the default target, last): no Java, no PySpark ----
FROM base AS qmgr
# redis-server: each queue manager's page set (its private queues), which qsg serve starts by
# itself under QSG_MQLOG_DIR (docs/explanation/cf-connectivity.md)
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends redis-server \
 && rm -rf /var/lib/apt/lists/*
COPY --from=deps /opt/qsg /opt/qsg
COPY --from=build /tmp/wheels /tmp/wheels
RUN pip install --no-index --no-deps /tmp/wheels/*.whl \
 && rm -rf /tmp/wheels \
 && python3 -c "import app.cli, app.api.app, app.gateway, migrations" \
 && qsg --help >/dev/null
USER qsg
ENV QSG_HOST=0.0.0.0 QSG_PORT=9441
EXPOSE 9441
CMD ["qsg", "serve"]
