# benchbot in a container: build the image with `docker build -t benchbot .` (or podman),
# then `docker run --rm -v "$PWD:/repo" benchbot compare --repo /repo --base main --head HEAD`.
# The README's "Run it in a container" says how to give it a repository and CPUs.

# Both stages start from Debian 12 ("bookworm"), slim variant, named by the digest of
# its multi-architecture index so that a rebuild starts from the same bytes whatever the
# tag points at by then. Pinned on 2026-12-01, from Renovate's digest updates of the tag
# in public repositories (no registry could be asked where this was written; the
# commands below confirm it). To move to a newer bookworm-slim, read the tag's current
# digest with one of
#   skopeo inspect --format '{{.Digest}}' docker://docker.io/library/debian:bookworm-slim
#   docker buildx imagetools inspect docker.io/library/debian:bookworm-slim
# and replace the sha256 below (and the date above). `--build-arg BASE_IMAGE=...` builds
# on another image of Debian 12 without editing this file (the tests do so).
ARG BASE_IMAGE=docker.io/library/debian:bookworm-slim@sha256:88200866dfff7ea7f5cbcb6ec7c8a701889efe6fe859fe64d6990e4b07ea4171

# Build stage: benchbot's wheel and the wheels of its dependencies, from the source tree.
FROM ${BASE_IMAGE} AS build
# Package versions are not pinned: Debian's mirror keeps only the newest bookworm build
# of each package, so a pinned version stops installing at its next security update.
# The pinned base and Debian's stable policy keep what this installs from changing much.
# `apt-get clean` as well as removing the lists: Docker's Debian images drop downloaded
# packages by themselves, other Debian bases (such as the tests' own) do not.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-venv \
    && apt-get clean \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml README.md ./
COPY src ./src
COPY kernels ./kernels
RUN python3 -m venv /opt/build \
    && /opt/build/bin/pip wheel --no-cache-dir --wheel-dir /wheels .

# Final stage: what benchbot needs to build and run the workloads of a C or shell
# project (git, gcc, make, the C library's headers), bubblewrap for benchbot's sandbox
# where the container may make user namespaces, and benchbot in a venv.
FROM ${BASE_IMAGE}
LABEL org.opencontainers.image.title="benchbot" \
      org.opencontainers.image.description="Compares two git revisions' performance: interleaved runs, an A/A check, one verdict per workload."
# safe.directory '*' in the system gitconfig: a repository mounted from the host belongs
# to a host user, usually not this image's, and git (since 2.35.2) refuses to work in a
# repository that someone else owns ("dubious ownership"). That check keeps a user from
# running another user's hooks and config unawares; here the repository is the one the
# user mounted so that it be built and run, so it would only get in the way.
# Package versions unpinned, for the reason given in the build stage.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
        bubblewrap ca-certificates gcc git libc6-dev make python3 python3-venv valgrind \
    && apt-get clean \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 1000 --user-group --shell /bin/bash benchbot \
    && git config --system --add safe.directory '*'

# The wheels are bind-mounted from the build stage rather than copied, so that they do
# not stay behind in a layer of the image (RUN --mount needs BuildKit, Docker's default
# builder since 23.0, or podman/buildah).
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    python3 -m venv /opt/benchbot \
    && /opt/benchbot/bin/pip install --no-cache-dir --no-index --find-links /wheels benchbot

ENV PATH=/opt/benchbot/bin:$PATH
# Numeric, so that a runtime can check that it is not root without reading /etc/passwd.
USER 1000:1000
WORKDIR /repo
ENTRYPOINT ["benchbot"]
CMD ["--help"]
