# syntax=docker/dockerfile:1.7
#
# lance-catalog: one Rust binary on a distroless glibc image (no shell).
#
#   DOCKER_BUILDKIT=1 docker build -t lance-catalog:0.1.0 .
#   docker run --rm -p 2333:2333 lance-catalog:0.1.0   # data in /var/lib/lance-catalog/lance-catalog-data
#   docker run --rm -p 2333:2333 -e LANCE_CATALOG_ROOT=s3://bucket/catalog \
#     -e AWS_REGION=us-east-1 --env-file aws.env lance-catalog:0.1.0
#
# The builder and the runtime are both Debian 12 (bookworm), so the binary's
# glibc matches. For reproducible builds pin both images by digest
# (image:tag@sha256:...).

ARG RUST_VERSION=1.94
# distroless/cc: glibc, libgcc_s, CA certificates, tzdata, a nonroot user
# (65532), no shell. For a busybox shell while debugging:
#   --build-arg RUNTIME_IMAGE=gcr.io/distroless/cc-debian12:debug-nonroot
ARG RUNTIME_IMAGE=gcr.io/distroless/cc-debian12:nonroot

# ---------------------------------------------------------------------------
FROM rust:${RUST_VERSION}-bookworm AS builder

# protoc: Lance's and the catalog's build scripts compile .proto files. The
# C parts (aws-lc-sys, zstd-sys, lz4-sys) build with the image's gcc.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends protobuf-compiler libprotobuf-dev \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /src
# Only what the build reads (.dockerignore keeps everything else out).
COPY Cargo.toml Cargo.lock build.rs ./
COPY proto ./proto
COPY console ./console
COPY src ./src

# The registry and target/ live in BuildKit caches across builds, so a
# source change recompiles the crate, not Lance and DataFusion. The binary
# is copied out of the cache mount in the same step.
RUN --mount=type=cache,id=lance-catalog-cargo-registry,target=/usr/local/cargo/registry,sharing=locked \
    --mount=type=cache,id=lance-catalog-cargo-git,target=/usr/local/cargo/git,sharing=locked \
    --mount=type=cache,id=lance-catalog-target,target=/src/target,sharing=locked \
    cargo build --release --locked --bin lance-catalog \
 && install -D -m 0755 target/release/lance-catalog /out/lance-catalog \
 && mkdir -p /out/var-lib/lance-catalog

# ---------------------------------------------------------------------------
FROM ${RUNTIME_IMAGE} AS runtime

ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="lance-catalog" \
      org.opencontainers.image.description="Catalog and governance for Lance tables: Lance Namespace REST, gRPC and Arrow Flight on one port" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0"

COPY --from=builder /out/lance-catalog /usr/local/bin/lance-catalog
# A writable working directory: without LANCE_CATALOG_ROOT (or `root` in a
# config file) the server keeps its catalog in ./lance-catalog-data here.
# The Helm chart sets an object-store root (or mounts a volume here).
# (The directory is copied, not created as a parent, so --chown covers it.)
COPY --from=builder --chown=65532:65532 /out/var-lib/ /var/lib/

# The nonroot user of distroless (the chart's runAsUser/runAsGroup/fsGroup).
USER 65532:65532
WORKDIR /var/lib/lance-catalog

# Listen on every interface (the server's own default is loopback). Only
# this is set: an environment variable outranks a --config file, so a root
# set here would silently win over the file's `root`.
ENV LANCE_CATALOG_LISTEN=0.0.0.0:2333

# REST (HTTP/1.1 and h2c), gRPC and Arrow Flight (h2c), /healthz, /readyz,
# /metrics. No HEALTHCHECK: the image has no shell or HTTP client;
# Kubernetes probes /healthz and /readyz itself.
EXPOSE 2333

# SIGTERM stops the server after in-flight requests finish.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/lance-catalog"]
CMD ["serve"]
