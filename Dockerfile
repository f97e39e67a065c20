# The container image of fifoq serve, the local Amazon SQS and SNS endpoint: the fifoq command, a static Go binary (CGO_ENABLED=0), on an empty
# base, as GoReleaser's Dockerfiles do. Nothing is pulled: the binary is built outside the image, by
#
#	bash .ci/image [TAG]    # default fifoq:dev
#
# which runs go build and then docker build on a context that holds this file, the binary and an empty
# data directory ("docker build ." from the repository does not work: the binary is not there).
# docs/containers.md says how to run it.
FROM scratch

ARG VERSION=unknown
ARG REVISION=unknown
ARG CREATED=1970-01-01T00:00:00Z

# The OCI image annotations (github.com/opencontainers/image-spec, annotations.md), as labels.
LABEL org.opencontainers.image.title="fifoq" \
      org.opencontainers.image.description="A local Amazon SQS and SNS endpoint (fifoq serve): standard and FIFO queues and topics with SQS's and SNS's semantics, in memory or on disk" \
      org.opencontainers.image.url="https://github.com/fifoq/fifoq" \
      org.opencontainers.image.source="https://github.com/fifoq/fifoq" \
      org.opencontainers.image.documentation="https://github.com/fifoq/fifoq/blob/main/docs/containers.md" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}"

COPY fifoq /usr/local/bin/fifoq
# /data is where a volume goes for durable queues (-e FIFOQ_DATA_DIR=/data -v fifoq-data:/data): owned by
# the user the server runs as, so that a new named volume is too.
COPY --chown=65532:65532 data /data

# The defaults a container needs, as environment variables so that "docker run -e" overrides them: listen
# on every interface (a published port is how the container is reached, so --allow-remote, and the server
# warns that it checks no signature unless given credentials). Queues and topics live in memory unless
# FIFOQ_DATA_DIR is set. The first line the server prints is http://127.0.0.1:9324: 0.0.0.0 is printed as the
# address to open on the Docker host, through the published port.
ENV FIFOQ_ADDR=0.0.0.0:9324 \
    FIFOQ_ALLOW_REMOTE=true

# No root: the user and group "nonroot" of distroless images.
USER 65532:65532
EXPOSE 9324

# fifoq health asks /health on FIFOQ_ADDR (0.0.0.0 is asked on 127.0.0.1): the image has no curl.
HEALTHCHECK --interval=5s --timeout=3s --start-period=10s --retries=3 CMD ["/usr/local/bin/fifoq", "health"]

ENTRYPOINT ["/usr/local/bin/fifoq"]
CMD ["serve"]
