# forksync GitHub App: `forksync serve` (webhook server + queue worker processes) as a non-root user.
#
#   docker build -t forksync .
#   docker run -p 8080:8080 --env-file forksync.env \
#     -v /path/to/app-private-key.pem:/run/secrets/forksync-app.pem:ro \
#     -v forksync-data:/var/lib/forksync forksync
#
# Settings are FORKSYNC_* environment variables (docs/github.md; `forksync app setup` writes them to
# forksync.env); the App's private key is mounted read-only, never baked into the image.
# compose.yaml runs the web server and the worker as two containers on one volume.
# Without a container engine, `.venv/bin/python .ci/image_check.py` (the dev venv) lints this file with
# hadolint, installs the built wheel in a clean venv and runs the image's CMD until its HEALTHCHECK passes.

# --- builder: the forksync wheel, built from the source tree --------------------------------------
FROM python:3.11-slim AS builder
WORKDIR /src
COPY pyproject.toml README.md app.py ./
COPY bot ./bot
COPY gpu_runner ./gpu_runner
COPY templates ./templates
# bot/templates links to ../templates: the wheel carries the templates as package data
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

# --- the image: the locked runtime dependencies, then the wheel (no source tree, not editable) ---
FROM python:3.11-slim
# the commit this image is built from (docker build --build-arg FORKSYNC_REVISION=$(git rev-parse HEAD)):
# the GPU workflow installs forksync at exactly this commit on the runners
ARG FORKSYNC_REVISION=""

# git: the bot fetches upstream and pushes sync branches with the git CLI
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates \
 && rm -rf /var/lib/apt/lists/*

COPY requirements/runtime.lock /tmp/runtime.lock
COPY --from=builder /wheels /tmp/wheels
# exactly the tested versions (hashes required; the lock holds every dependency: nothing is
# resolved), then forksync itself without resolving anything
RUN pip install --no-cache-dir --require-hashes --no-deps -r /tmp/runtime.lock \
 && pip install --no-cache-dir --no-deps /tmp/wheels/forksync-*.whl \
 && rm -rf /tmp/wheels /tmp/runtime.lock \
 && useradd --system --create-home --home-dir /home/forksync --uid 10001 forksync \
 && mkdir -p /var/lib/forksync \
 && chown forksync /var/lib/forksync

# FORKSYNC_PRIVATE_KEY_FILE is where the key is mounted, not the key itself
# hadolint ignore=DL3064
ENV FORKSYNC_REVISION=${FORKSYNC_REVISION} \
    FORKSYNC_HOST=0.0.0.0 \
    FORKSYNC_PORT=8080 \
    FORKSYNC_DB=/var/lib/forksync/forksync.db \
    FORKSYNC_WORKDIR=/var/lib/forksync/work \
    FORKSYNC_PRIVATE_KEY_FILE=/run/secrets/forksync-app.pem \
    PYTHONUNBUFFERED=1

# numeric, so a runtime that resolves no names (Kubernetes runAsNonRoot) sees a non-root user
USER 10001
WORKDIR /var/lib/forksync
VOLUME ["/var/lib/forksync"]
EXPOSE 8080
# /healthz answers 200 only while a worker beats its heartbeat, no worker crash-loops, no delivery
# waits unclaimed past 5 min and nothing is dead-lettered; otherwise 503, which urlopen raises on.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s \
  CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('FORKSYNC_PORT', '8080'), timeout=4)"]
CMD ["forksync", "serve"]
