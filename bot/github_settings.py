"""``github:`` section of forksync.yml (owned by the GitHub-app work; see docs/design.md)."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class GitHubSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
