# Python 3.11 of Debian bookworm with venv: what the project's Dockerfile needs of its base
# (QSG_BASE_IMAGE), made by deploy/build-base-images.sh from Debian's packages.
ARG DEBIAN_IMAGE=qsg-local/debian:bookworm
FROM ${DEBIAN_IMAGE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 python3-venv ca-certificates \
 && rm -rf /var/lib/apt/lists/*
CMD ["python3"]
