"""The ``forksync`` command line: one module per command group, assembled by :mod:`bot.cli.main`.

May import: app and everything below it. Imported by: demo, ``app.py``. The demo registers its
``demo`` command by module name (:data:`bot.cli.main.COMMAND_MODULES`), since it sits above.
"""
