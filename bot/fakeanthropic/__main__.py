"""``python -m bot.fakeanthropic --port N --script FILE [--api-key KEY]``: serve the fake until
interrupted. Prints ``listening on http://HOST:PORT`` once ready (``--port 0`` picks a free one)."""
from __future__ import annotations

import argparse
import asyncio
import sys

from bot.fakeanthropic import FakeAnthropic
from bot.fakeanthropic.script import load_script


async def _serve(args: argparse.Namespace) -> None:
    replies = load_script(args.script) if args.script else []
    fake = FakeAnthropic(replies, api_key=args.api_key, host=args.host, port=args.port)
    await fake.start()
    print(f"listening on {fake.base_url}", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await fake.stop()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bot.fakeanthropic",
                                description="A local Anthropic Messages API with scripted replies.")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8123, help="port (0: any free one)")
    p.add_argument("--script", metavar="FILE", help="JSON/YAML list of replies (see bot/fakeanthropic/script.py)")
    p.add_argument("--api-key", default=None, help="require this key (default: accept any)")
    args = p.parse_args(argv)
    if args.script:
        try:
            load_script(args.script)
        except ValueError as e:
            print(f"fakeanthropic: {e}", file=sys.stderr)
            return 2
    try:
        asyncio.run(_serve(args))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
