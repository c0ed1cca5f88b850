"""Two writers of one GitHub object at once, without sleeps: the local GitHub holds the first
writer's request until the second has finished or waits for the first's claim."""
from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable


async def second_meets_first(fake, method: str, path: str, second_claims, first: Callable[[], Awaitable[Any]],
                             second: Callable[[], Awaitable[Any]]) -> list[Any]:
    """Run ``first()`` until the local GitHub ``fake`` holds its ``method path`` request, then
    ``second()``; release the request once ``second`` is done or waits for a claim
    (``second_claims.on_wait``: the claims its client carries). Returns both results, in order."""
    waited = asyncio.Event()
    second_claims.on_wait = lambda full, key: waited.set()
    hold = fake.faults.hold(method, path)
    a = asyncio.create_task(first())
    reached = asyncio.create_task(hold.reached.wait())
    await asyncio.wait({a, reached}, return_when=asyncio.FIRST_COMPLETED)
    b = asyncio.create_task(second())
    waiting = asyncio.create_task(waited.wait())
    await asyncio.wait({a, b, waiting}, return_when=asyncio.FIRST_COMPLETED)
    hold.release()
    try:
        return list(await asyncio.gather(a, b))
    finally:
        reached.cancel()
        waiting.cancel()
