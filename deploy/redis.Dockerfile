# Redis for tafel (`make images`): Debian's redis-server 7, the data on a volume at /data, every
# write in the append-only file fsynced every second (what `make run` uses too), as a non-root user.
# BASE_IMAGE: a Debian bookworm. With a registry the default is pulled and redis-server installed
# from Debian's packages; `make images` here passes a debootstrap base that already holds it.
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
ARG VERSION=0.0.0
ARG REVISION=unknown
ARG CREATED=unknown
LABEL tafel.build="image" \
      org.opencontainers.image.title="tafel-redis" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}"
# hadolint ignore=DL3008
RUN command -v redis-server >/dev/null \
 || { apt-get update && apt-get install -y --no-install-recommends redis-server && rm -rf /var/lib/apt/lists/*; } \
 && mkdir -p /data && chown 10002:10002 /data
VOLUME /data
WORKDIR /data
USER 10002:10002
EXPOSE 6379
HEALTHCHECK --interval=5s --timeout=3s --retries=5 CMD ["redis-cli", "ping"]
CMD ["redis-server", "--bind", "0.0.0.0", "--protected-mode", "no", "--dir", "/data", "--save", "", "--appendonly", "yes", "--appendfsync", "everysec"]
