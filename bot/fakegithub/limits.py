"""GitHub's rate limits, emulated per credential (docs.github.com "Rate limits for the REST API").

- Primary: ``limit`` requests per hour per token (GitHub: ≥ 5,000 for an installation); every
  answered request counts except a 304 to a conditional request. The ``x-ratelimit-*`` headers are
  truthful; past the limit the answer is 403 with ``x-ratelimit-remaining: 0`` and the reset time.
- Secondary (off unless ``content_per_minute`` is set): more than that many content-creating
  requests (POST/PATCH/PUT/DELETE) per minute per token → 403 "You have exceeded a secondary rate
  limit" with ``retry-after: 60`` (GitHub: 80 per minute).
Times come from the fake's clock.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

WINDOW_S = 3600.0


@dataclass
class _Bucket:
    reset: float
    used: int = 0
    writes: deque = field(default_factory=deque)


class RateLimits:
    def __init__(self, limit: int = 5000, content_per_minute: int | None = None):
        self.limit = limit
        self.content_per_minute = content_per_minute
        self._buckets: dict[str, _Bucket] = {}

    def _bucket(self, key: str, now: float) -> _Bucket:
        b = self._buckets.get(key)
        if b is None or now >= b.reset:
            b = self._buckets[key] = _Bucket(reset=now + WINDOW_S)
        return b

    def check(self, key: str, method: str, now: float) -> tuple[int, str, dict[str, str]] | None:
        """An error answer ``(status, message, headers)`` when ``key`` is over a limit, else None."""
        b = self._bucket(key, now)
        if b.used >= self.limit:
            return 403, "API rate limit exceeded for installation.", self.headers(key, now)
        if self.content_per_minute is not None and method in ("POST", "PATCH", "PUT", "DELETE"):
            while b.writes and b.writes[0] <= now - 60:
                b.writes.popleft()
            if len(b.writes) >= self.content_per_minute:
                return 403, ("You have exceeded a secondary rate limit. Please wait a few minutes before you try "
                             "again."), {"retry-after": "60"}
            b.writes.append(now)
        return None

    def count(self, key: str, now: float) -> None:
        self._bucket(key, now).used += 1

    def headers(self, key: str, now: float) -> dict[str, str]:
        b = self._bucket(key, now)
        return {"x-ratelimit-limit": str(self.limit), "x-ratelimit-remaining": str(max(0, self.limit - b.used)),
                "x-ratelimit-used": str(b.used), "x-ratelimit-reset": str(int(b.reset)),
                "x-ratelimit-resource": "core"}
