"""``agents:`` section of forksync.yml (owned by the agents work)."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class AgentSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
