# PostgreSQL 15 from Debian's postgresql-15 package (POSTGRES_IMAGE), made by
# deploy/build-base-images.sh: what docker-compose.yml uses of the public postgres image
# (POSTGRES_USER / POSTGRES_PASSWORD / POSTGRES_DB on first start, data in PGDATA, pg_isready).
ARG DEBIAN_IMAGE=qsg-local/debian:bookworm
FROM ${DEBIAN_IMAGE}
# Debian's package would create and start a cluster of its own: the entry point makes the one used.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql-common \
 && sed -ri 's/^#?\s*create_main_cluster\s*=.*/create_main_cluster = false/' /etc/postgresql-common/createcluster.conf \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql-15 \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /var/lib/postgresql/data /var/run/postgresql \
 && chown postgres:postgres /var/lib/postgresql/data /var/run/postgresql \
 && chmod 700 /var/lib/postgresql/data
COPY postgres-entrypoint.sh /usr/local/bin/postgres-entrypoint.sh
ENV PATH=/usr/lib/postgresql/15/bin:$PATH PGDATA=/var/lib/postgresql/data
USER postgres
EXPOSE 5432
STOPSIGNAL SIGINT
ENTRYPOINT ["/usr/local/bin/postgres-entrypoint.sh"]
CMD ["postgres"]
