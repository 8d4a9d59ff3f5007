# Redis from Debian's redis-server package (REDIS_IMAGE), made by deploy/build-base-images.sh:
# as the public redis image, data in /data, runs as the user redis, reachable from other
# containers without protected mode; the command line is redis-server's.
ARG DEBIAN_IMAGE=qsg-local/debian:bookworm
FROM ${DEBIAN_IMAGE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends redis-server redis-tools \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /data && chown redis:redis /data
COPY redis-entrypoint.sh /usr/local/bin/redis-entrypoint.sh
WORKDIR /data
USER redis
EXPOSE 6379
ENTRYPOINT ["/usr/local/bin/redis-entrypoint.sh"]
CMD ["redis-server"]
