# syntax=docker/dockerfile:1
# The `audit` CLI with the default, torch-free install (docling's model-free PDF pipeline, no
# OCR extra), from the locked dependencies.
#
#   docker build -t automaton-auditor .
#   docker run --rm --user "$(id -u):$(id -g)" -v "$PWD:/work:ro" -v "$PWD/../audit:/out" \
#       automaton-auditor run /work docs/report.pdf --output-dir /out
#
# Run it as the owner of the mounted repository (--user), so that git trusts the folder;
# the image's own user is an unprivileged uid. git is the only system package an audit
# needs (it clones the target with a hardened configuration).

ARG PYTHON_VERSION=3.12

FROM python:${PYTHON_VERSION}-slim AS build
COPY --from=ghcr.io/astral-sh/uv:0.9 /uv /bin/uv
ENV UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy \
    UV_PYTHON_DOWNLOADS=never \
    UV_PROJECT_ENVIRONMENT=/opt/auditor
WORKDIR /src
# Dependencies first: this layer is rebuilt only when the lock changes.
COPY pyproject.toml uv.lock ./
RUN --mount=type=cache,target=/root/.cache/uv \
    uv sync --locked --no-dev --no-install-project
COPY README.md ./
# The package's embedded rubric is a symlink into rubric/.
COPY rubric ./rubric
COPY src ./src
RUN --mount=type=cache,target=/root/.cache/uv \
    uv sync --locked --no-dev --no-editable

FROM python:${PYTHON_VERSION}-slim
# git follows the distribution's security updates: an exact Debian revision would break the
# build whenever the archive moves on.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends git \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /opt/auditor /opt/auditor
# HOME and the caches under /tmp: writable by whichever --user runs the container.
ENV PATH=/opt/auditor/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    HOME=/tmp \
    AUDITOR_CACHE_DIR=/tmp/automaton-auditor
USER 10001:10001
WORKDIR /work
ENTRYPOINT ["audit"]
CMD ["--help"]
