"""What a test sees of the processes it starts (a real ``forksync serve`` and its workers): a free
port to give one, its children and whether a process still runs (read from ``/proc``, Linux), and
an async wait for a condition."""
from __future__ import annotations

import asyncio
import socket
from pathlib import Path


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listened on a moment ago (the OS's pick)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def children(pid: int) -> list[int]:
    """The pids of the processes whose parent is ``pid`` now."""
    out = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            text = status.read_text()
        except OSError:
            continue
        if f"\nPPid:\t{pid}\n" in text:
            out.append(int(status.parent.name))
    return out


def alive(pid: int) -> bool:
    """Whether ``pid`` runs: it exists and is no zombie (one that exited and was not reaped yet)."""
    try:
        state = Path(f"/proc/{pid}/status").read_text().split("State:\t", 1)[1][0]
    except (OSError, IndexError):
        return False
    return state != "Z"


async def wait_for(pred, what: str, timeout: float = 90.0) -> None:
    """Await ``pred()`` every 0.1 s until it is true; AssertionError naming ``what`` after
    ``timeout`` seconds (a bound for a broken test, no budget)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while loop.time() < end:
        if await pred():
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")
