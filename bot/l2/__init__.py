"""L2 on the fork's trunk: benchmark series, change-point detection (pure), confirmation,
bisection to one upstream commit, the regression issue and the back-out PR.

May import: validation, sync, git, github, store, templating. Imported by: app, cli.
"""
