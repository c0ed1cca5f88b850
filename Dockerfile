# forksync GitHub App: `forksync serve` (webhook server + queue worker process) as a non-root user.
#
#   docker build -t forksync .
#   docker run -p 8080:8080 \
#     -e FORKSYNC_APP_ID=123456 -e FORKSYNC_WEBHOOK_SECRET=... \
#     -v /path/to/app-private-key.pem:/run/secrets/forksync-app.pem:ro \
#     -v forksync-data:/var/lib/forksync forksync
#
# Settings are environment variables (docs/github.md, "Webhook app, queue and handlers"); the
# App's private key is mounted read-only, never baked into the image.
FROM python:3.11-slim

# git: the bot fetches upstream and pushes sync branches with the git CLI
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /opt/forksync
COPY pyproject.toml README.md app.py ./
COPY bot ./bot
COPY gpu_runner ./gpu_runner
COPY templates ./templates
# editable install: the code (and templates/, read next to the bot package) stays in /opt/forksync
RUN pip install --no-cache-dir -e . \
 && useradd --system --create-home --home-dir /home/forksync --uid 10001 forksync \
 && mkdir -p /var/lib/forksync \
 && chown forksync /var/lib/forksync

ENV FORKSYNC_HOST=0.0.0.0 \
    FORKSYNC_PORT=8080 \
    FORKSYNC_DB=/var/lib/forksync/forksync.db \
    FORKSYNC_WORKDIR=/var/lib/forksync/work \
    FORKSYNC_PRIVATE_KEY_FILE=/run/secrets/forksync-app.pem \
    PYTHONUNBUFFERED=1

USER forksync
VOLUME ["/var/lib/forksync"]
EXPOSE 8080
# /healthz answers 200 only while a worker beats its heartbeat, no worker crash-loops, no delivery
# waits unclaimed past 5 min and nothing is dead-lettered; otherwise 503, which urlopen raises on.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s \
  CMD python -c "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('FORKSYNC_PORT', '8080'), timeout=4)"
CMD ["forksync", "serve"]
