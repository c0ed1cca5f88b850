"""What the GitHub demo (:mod:`bot.demo.github`) reads from the local GitHub and how it prints it:
:class:`Outcome` (what was seen, for tests), readers over the REST API and the fork's git history,
and :class:`Show` (rich rules, tables and short lines on a console)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from rich.console import Console
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from bot.config.forksync import RemoteSpec, parse_config_text
from bot.demo.github_world import FORK, FORK_CONFIG, World
from bot.sync.ingest import load_state

STATUS_MARK = "<!-- forksync:status-issue -->"
SHOWN = [f"u{i}" for i in range(10, 22)]          # the upstream commits the demo moves


@dataclass
class Outcome:
    """What the demo saw on the local GitHub, step by step (for tests and the summary)."""

    prs: dict[int, dict] = field(default_factory=dict)             # number → {title, labels, ref, state, merged}
    checks: dict[str, dict[str, tuple[str, str]]] = field(default_factory=dict)  # step → name → (conclusion, title)
    gate: dict[str, list[str]] = field(default_factory=dict)       # step → blocking condition codes
    ledger: dict[str, dict[str, str]] = field(default_factory=dict)  # step → label → disposition
    status: dict[str, dict[str, str]] = field(default_factory=dict)  # step → status-issue row → value
    step_pr: dict[str, int] = field(default_factory=dict)          # step → the PR it is about
    drafts: dict[int, str] = field(default_factory=dict)           # draft chain PR → upstream sha12 it stopped at
    units: dict[str, list[str]] = field(default_factory=dict)      # step → the status issue's open units, as listed
    closed: dict[int, list[tuple[str, str]]] = field(default_factory=dict)  # PR forksync closed → (sha12, disposition)
    dead: list[str] = field(default_factory=list)                  # deliveries the app could not handle
    status_issue: int = 0
    shas: dict[str, str] = field(default_factory=dict)             # label (u10, …) → upstream sha
    ok: bool = False


# ---------------------------------------------------------------------- reading the local GitHub
async def open_prs(w: World) -> list[dict]:
    return sorted([p async for p in w.maintainer.getiter(f"/repos/{FORK}/pulls?state=open")], key=lambda p: p["number"])


async def status_issue(w: World) -> dict | None:
    async for i in w.maintainer.getiter(f"/repos/{FORK}/issues?state=open"):
        if STATUS_MARK in (i.get("body") or "") and "pull_request" not in i:
            return i
    return None


def status_rows(body: str) -> dict[str, str]:
    """The "Where the fork stands" table of the status issue body: row name → value (backticks off;
    a commit's ", committed <time>" left off, so the value is the sha the demo names)."""
    rows = {}
    for line in body.splitlines():
        m = re.match(r"^\| ([^|]+?) \| (.+?) \|$", line)
        if m and m.group(1).strip():
            rows[m.group(1).strip()] = m.group(2).replace("`", "").split(", committed ", 1)[0].strip()
    return rows


async def check_runs(w: World, sha: str) -> dict[str, dict]:
    """Latest check run per name on ``sha``."""
    runs = [r async for r in w.maintainer.getiter(f"/repos/{FORK}/commits/{sha}/check-runs",
                                                  iterable_key="check_runs")]
    out: dict[str, dict] = {}
    for r in sorted(runs, key=lambda r: r["id"]):
        out[r["name"]] = r
    return out


def ledger_of(w: World) -> dict[str, tuple[str, str]]:
    """label → (disposition, reason) of the upstream commits ``u10``…, rebuilt from the local
    GitHub's repositories exactly as ``forksync status`` would (:func:`bot.sync.ingest.load_state`)."""
    cfg = parse_config_text(FORK_CONFIG).model_copy(update={
        "upstream": RemoteSpec(url=str(w.upstream.path), ref="main"),
        "fork": RemoteSpec(url=str(w.fork.path), ref="main"),
        "cache_dir": str(w.root / "ledger-cache")})
    st = load_state(cfg, use_cache=False, fetch=False, record=False)
    return {w.label(e.sha): (e.disposition.value, e.reason) for e in st.ledger.entries}


def _plain(markdown: str) -> str:
    """A status-issue line for the console: links become their text, backticks go."""
    return re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", markdown).replace("`", "")


def _short_dead(reason: str) -> str:
    m = re.search(r"'(No commits between[^']*|[^']{10,})'", reason)
    return (reason.split(":", 1)[0] + ": " + m.group(1)) if m else reason[:200]


# ---------------------------------------------------------------------- printing
class Show:
    def __init__(self, console: Console, w: World, out: Outcome):
        self.c, self.w, self.out = console, w, out
        self._dead_seen = 0

    def rule(self, title: str) -> None:
        self.c.print(Rule(Text(title, style="bold")))

    def say(self, text: str, style: str = "") -> None:
        self.c.print(Text("  " + text, style=style))

    def named(self, value: str) -> str:
        """``value`` with a leading 12-hex upstream sha followed by its demo label (``u18``)."""
        m = re.match(r"^([0-9a-f]{12})$", value)
        if m:
            label = next((k for k, v in self.w.scenario.sha.items() if v.startswith(m.group(1))), None)
            return f"{value} ({label})" if label else value
        return value

    def dead(self) -> None:
        dead = self.w.app.dead()
        for d in dead[self._dead_seen:]:
            self.say(f"⚠ the app could not handle a delivery ({_short_dead(d)}); it is dead-lettered, "
                     "see `forksync queue`", "yellow")
        self._dead_seen = len(dead)
        self.out.dead = dead

    def prs(self, prs: list[dict], title: str = "open pull requests on meta/triton", with_state: bool = False) -> None:
        t = Table(title=title, title_justify="left", show_lines=False, pad_edge=False)
        for col in ("#", "title", "labels", "branch") + (("state",) if with_state else ()):
            t.add_column(col)
        for p in prs:
            state = "merged" if p.get("merged") else p["state"]
            t.add_row(str(p["number"]), Text(p["title"]), Text(", ".join(lab["name"] for lab in p["labels"])),
                      Text(p["head"]["ref"]), *((state,) if with_state else ()))
            self.out.prs[p["number"]] = {"title": p["title"], "labels": sorted(lab["name"] for lab in p["labels"]),
                                         "ref": p["head"]["ref"], "state": p["state"], "merged": bool(p.get("merged"))}
        self.c.print(t)

    def status(self, step: str, issue: dict | None) -> None:
        if issue is None:
            self.say("no status issue", "red")
            return
        rows = status_rows(issue["body"])
        self.out.status[step] = rows
        self.out.status_issue = issue["number"]
        keys = ("upstream head", "frontier pin", "contiguous pin", "Backlog")
        self.say(f"status issue #{issue['number']} \"{issue['title']}\"")
        self.say("  " + " · ".join(f"{k} {self.named(rows.get(k, '?'))}" for k in keys[:3]))
        self.say(f"  backlog {rows.get('Backlog', '?')}")
        units = [_plain(ln.split("retry ", 1)[1]) for ln in issue["body"].splitlines() if "<!-- retry:" in ln]
        deferred = issue["body"].split("## Deferred", 1)[-1].split("##", 1)[0].strip().splitlines()
        self.out.units[step] = units
        self.say("  open units: " + ("; ".join(units) if units else "none"))
        for d in deferred:
            if d.strip() and d.strip() != "None.":
                self.say("  deferred:   " + _plain(d.lstrip("- ")))

    def ledger(self, step: str, before: dict[str, tuple[str, str]], after: dict[str, tuple[str, str]],
               columns: tuple[str, str] = ("before", "after")) -> None:
        self.out.ledger[step] = {k: v[0] for k, v in after.items()}
        subjects = {label: self.w.scenario.upstream.git("log", "-1", "--format=%s", sha).strip()
                    for label, sha in self.w.scenario.sha.items() if label in SHOWN}
        t = Table(title=f"ledger of upstream commits u10…, rebuilt from git ({step})", title_justify="left",
                  pad_edge=False)
        for col in ("", "upstream commit", *columns):
            t.add_column(col)
        for label in SHOWN:
            if label not in after and label not in before:
                continue
            was, now = before.get(label, ("-", ""))[0], after.get(label, ("-", ""))[0]
            t.add_row(label, Text(subjects.get(label, "")), was, Text(now, style="bold" if now != was else ""))
        self.c.print(t)

    def checks(self, step: str, runs: dict[str, dict]) -> None:
        self.out.checks[step] = {n: (r.get("conclusion") or r["status"], (r.get("output") or {}).get("title") or "")
                                 for n, r in runs.items()}
        for name, r in runs.items():
            concl = r.get("conclusion") or r["status"]
            style = {"success": "green", "failure": "red"}.get(concl, "yellow")
            title = (r.get("output") or {}).get("title") or ""
            self.c.print(Text("  check run ").append(name, "bold").append(": ").append(concl, style)
                         .append(f" — {title}"))
            summary = (r.get("output") or {}).get("summary") or ""
            if name.endswith("/gate"):
                codes = []
                for line in summary.splitlines():
                    m = re.match(r"^\| (❌|✅) \| `([^`]+)` \| ([^|]*) \| (.*) \|$", line)
                    if m:
                        if m.group(1) == "❌":
                            codes.append(m.group(2))
                        # whole: a finding's end names what to look at (the tests a short suite lost)
                        self.say(f"    {m.group(1)} {m.group(2)} ({m.group(3).strip()}): {m.group(4)}")
                self.out.gate[step] = codes
            else:
                for line in summary.splitlines():
                    if line.startswith("- `") or line.startswith("| `"):
                        self.say("    " + line.replace("|", " ").strip()[:180])


__all__ = ["Outcome", "Show", "open_prs", "status_issue", "status_rows", "check_runs", "ledger_of"]
