"""A faithful local GitHub for tests and ``forksync demo``: REST operations held to GitHub's
OpenAPI description, real bare git repositories, App authentication, signed webhooks and
programmable faults. See docs/github.md ("Local GitHub and the client")."""
from bot.fakegithub.server import FakeGitHub, generate_app_key

__all__ = ["FakeGitHub", "generate_app_key"]
