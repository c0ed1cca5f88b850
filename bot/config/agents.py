"""``agents:`` section of forksync.yml (owned by the agents work; see docs/agents.md).

Example::

    agents:
      enabled: true
      model: claude-sonnet-4-6
      daily_token_budget: 2000000      # input + output tokens per UTC day, all agents together
      timeout_s: 120                   # a stall (no answer yet, or no next streamed event), seconds
      max_retries: 4                   # after the first attempt, on 408/409/429/5xx/529/timeouts
      backoff_base_s: 2.0              # capped exponential backoff: min(base * 2**n, cap)
      backoff_cap_s: 60.0              # also caps the server's retry-after
      max_output_tokens: 16000
      max_prompt_tokens: 150000        # estimated as characters / 4; a larger prompt is not sent
      excerpt_over_lines: 400          # a conflicted file longer than this is shown as excerpts around its blocks
      max_links: 5
      allowed_link_hosts: [github.com, triton-lang.org]
      max_mentions: 0                  # live @-mentions an agent text may keep (of allowed logins only)
      max_text_chars: 6000             # agent prose rendered into one PR/issue body
      reject_on_sanitize: true         # prose that needed the output rails rejects the whole answer

Agents are *off* when ``enabled`` is false or no API key is set (env ``FORKSYNC_ANTHROPIC_KEY`` or
``ANTHROPIC_API_KEY``); everything else in forksync works without them.
"""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

#: The model name that the demo and the tests give the scripted local model (bot/fakeanthropic):
#: every text a person reads names it as what it is (:func:`bot.agents.render.agent_label`),
#: never as a real model.
SCRIPTED_MODEL = "forksync-scripted-local"


class AgentSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True
    model: str = Field("claude-sonnet-4-6", min_length=1)
    base_url: str | None = None               # None → the SDK's default (api.anthropic.com)
    daily_token_budget: int = Field(2_000_000, ge=0)
    timeout_s: float = Field(120.0, gt=0, le=600)
    max_retries: int = Field(4, ge=0, le=20)
    backoff_base_s: float = Field(2.0, ge=0)
    backoff_cap_s: float = Field(60.0, ge=0)
    max_output_tokens: int = Field(16_000, ge=1, le=128_000)
    max_prompt_tokens: int = Field(150_000, ge=1)      # estimated as characters / 4; larger prompts are skipped
    # a conflicted file of more lines is sent as excerpts around its conflict blocks (answered per
    # block) instead of whole, twice (merge output and the fork's file); 0 sends every file whole
    excerpt_over_lines: int = Field(400, ge=0)
    excerpt_context_lines: int = Field(30, ge=0, le=1000)
    max_links: int = Field(5, ge=0)
    allowed_link_hosts: list[str] = Field(default_factory=lambda: [
        "github.com", "triton-lang.org", "pytorch.org", "docs.nvidia.com", "llvm.org", "mlir.llvm.org"])
    max_mentions: int = Field(0, ge=0)
    max_text_chars: int = Field(6000, ge=200)
    reject_on_sanitize: bool = True          # prose the output rails must change rejects the answer
    conflict_resolution: bool = True
    proposed_fix: bool = True
    summaries: bool = True

    @field_validator("allowed_link_hosts")
    @classmethod
    def _hosts(cls, v: list[str]) -> list[str]:
        out = []
        for h in v:
            h = h.strip().lower()
            if not h or "/" in h or ":" in h:
                raise ValueError(f"{h!r} is not a host name (write e.g. 'github.com', no scheme or path)")
            out.append(h)
        return out
