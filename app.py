"""forksync entry point: ``python app.py …`` and the ``forksync`` console script."""
from bot.cli.main import main

if __name__ == "__main__":
    raise SystemExit(main())
