"""``triage:`` section of forksync.yml (owned by the triage work)."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class TriageSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
