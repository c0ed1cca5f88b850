"""``suites:`` section of forksync.yml (owned by the validation work)."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class SuiteConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
