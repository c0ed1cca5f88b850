"""``python -m bot.fakegithub --port N --state DIR [--setup setup.json]``: run the local GitHub
as a process. Prints one JSON line ``{"url", "app_id", "private_key_file", …}`` on stdout when
ready; configure it further through ``POST /_fake/setup`` (see :mod:`bot.fakegithub.admin`)."""
from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from pathlib import Path

from bot.fakegithub.admin import apply_setup
from bot.fakegithub.server import FakeGitHub


async def _main(args) -> int:
    fake = FakeGitHub(args.state, port=args.port, webhook_url=args.webhook_url,
                      webhook_secret=args.webhook_secret or "", validate_responses=not args.no_response_validation,
                      git_http_urls=args.git_http)
    spec = json.loads(Path(args.setup).read_text()) if args.setup else {}
    apply_setup(fake, spec)
    await fake.start()
    app = next(iter(fake.state.apps.values()))
    key_file = Path(args.state) / "app-private-key.pem"
    key_file.write_text(app.private_key_pem)
    key_file.chmod(0o600)
    print(json.dumps({"url": fake.url, "app_id": app.id, "app_slug": app.slug, "private_key_file": str(key_file),
                      "installations": [i.id for i in fake.state.installations.values()],
                      "repos": {r.full_name: str(r.path) for r in fake.state.repos.values()}}), flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await fake.stop()
    for v in fake.violations:
        print(f"contract violation: {v}", file=sys.stderr)
    return 1 if fake.violations else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bot.fakegithub", description=__doc__)
    ap.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (0: a free one)")
    ap.add_argument("--state", required=True, help="folder for the bare repositories and the App key")
    ap.add_argument("--setup", help="JSON file with the initial setup (same shape as POST /_fake/setup)")
    ap.add_argument("--webhook-url", help="where state-change webhooks are delivered")
    ap.add_argument("--webhook-secret", help="HMAC secret for webhook signatures")
    ap.add_argument("--no-response-validation", action="store_true", help="skip response schema checks (speed)")
    ap.add_argument("--git-http", action="store_true",
                    help="clone_url is the fake's smart-HTTP URL (push with x-access-token:<token>@) instead of a path")
    args = ap.parse_args(argv)
    Path(args.state).mkdir(parents=True, exist_ok=True)
    return asyncio.run(_main(args))


if __name__ == "__main__":
    raise SystemExit(main())
