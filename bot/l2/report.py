"""Evidence for a regression found by L2 detection and bisection, and the texts built from it:
the regression issue (``templates/issues/regression.md.j2``), the back-out commit message and PR
body (``templates/prs/backout.md.j2``) carrying ``Upstream-Reverted: <sha> <reason>``, and a plot.

The plot is an SVG written here (matplotlib is not a dependency; an SVG renders inline on
GitHub when attached or committed). Pure functions: no I/O except :func:`write_plot`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence
from xml.sax.saxutils import escape

from bot.git.bisect import BisectResult
from bot.l2.detection import ChangePoint, Confirmation, SeriesKey
from bot.templating import render

_UPSTREAM_COMMIT = re.compile(r"^Upstream-Commit:\s*([0-9a-f]{7,40})\s*$", re.MULTILINE)


def upstream_sha_of(message: str) -> str | None:
    """The upstream sha a sync commit carries in its ``Upstream-Commit:`` trailer, else None."""
    m = _UPSTREAM_COMMIT.findall(message)
    return m[-1] if m else None


@dataclass(frozen=True)
class Evidence:
    """What a regression issue shows. ``values``/``shas``: the L2 series (per-point medians,
    oldest first); ``change``: the alerting change point (None for correctness bisections);
    ``culprit_subject``/``upstream_sha``: of the culprit fork commit."""

    title: str
    key: SeriesKey | None
    values: tuple[float, ...]
    shas: tuple[str, ...]
    change: ChangePoint | None
    confirmation: Confirmation | None
    bisect: BisectResult
    culprit_subject: str = ""
    upstream_sha: str | None = None
    plot_path: str = ""
    command: str = ""


def render_issue(ev: Evidence) -> str:
    """The regression issue body (markdown)."""
    return render("issues/regression.md.j2", ev=ev)


def backout_reason(ev: Evidence) -> str:
    """One-line reason for the ``Upstream-Reverted`` trailer (no newlines)."""
    if ev.change is not None and ev.key is not None:
        r = f"L2 regression {ev.change.rel_shift:+.1%} on {ev.key}"
    else:
        r = f"breaks {ev.command or 'the L1 suite'}"
    return " ".join(r.split())


def backout_message(ev: Evidence) -> str:
    """Commit message of the back-out commit; its trailer ``Upstream-Reverted: <upstream sha>
    <reason>`` makes the ledger show REVERTED once it lands. Raises ValueError when the culprit
    is unverified or carries no ``Upstream-Commit`` trailer (not a sync pick: no back-out PR)."""
    b = ev.bisect
    if not (b.culprit and b.verified):
        raise ValueError("no back-out for an unverified culprit: verify it against its parent first")
    if not ev.upstream_sha:
        raise ValueError(f"culprit {b.culprit[:12]} is not a sync pick (no Upstream-Commit trailer): "
                         "file the issue, do not open a back-out PR")
    subject = ev.culprit_subject or b.culprit[:12]
    return (f'Revert "{subject}"\n\nThis reverts commit {b.culprit}.\n\n'
            f"Upstream-Reverted: {ev.upstream_sha} {backout_reason(ev)}\n")


def render_backout_pr(ev: Evidence, issue_number: int | None = None) -> str:
    """The back-out PR body (markdown)."""
    return render("prs/backout.md.j2", ev=ev, issue_number=issue_number, message=backout_message(ev),
                  reason=backout_reason(ev))


def plot_svg(values: Sequence[float], change_index: int | None = None, title: str = "",
             unit: str = "", width: int = 640, height: int = 240) -> str:
    """An SVG line plot of a series, the change point as a vertical red line and each side's
    mean as a dashed line. Deterministic text (same input → same bytes)."""
    vals = [float(v) for v in values]
    if not vals:
        raise ValueError("plot_svg: empty series")
    pad_l, pad_r, pad_t, pad_b = 60, 10, 24, 24
    lo, hi = min(vals), max(vals)
    if hi == lo:
        hi, lo = hi + 1, lo - 1
    span = hi - lo
    lo, hi = lo - 0.05 * span, hi + 0.05 * span
    w, h = width - pad_l - pad_r, height - pad_t - pad_b
    n = len(vals)

    def xy(i, v):
        x = pad_l + (w * i / max(1, n - 1))
        y = pad_t + h * (1 - (v - lo) / (hi - lo))
        return f"{x:.1f},{y:.1f}"

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
             f'<rect width="{width}" height="{height}" fill="white"/>',
             f'<text x="{pad_l}" y="15">{escape(title)}</text>',
             f'<line x1="{pad_l}" y1="{pad_t}" x2="{pad_l}" y2="{pad_t + h}" stroke="black"/>',
             f'<line x1="{pad_l}" y1="{pad_t + h}" x2="{pad_l + w}" y2="{pad_t + h}" stroke="black"/>',
             f'<text x="4" y="{pad_t + 8}">{hi:.4g}</text>',
             f'<text x="4" y="{pad_t + h}">{lo:.4g}</text>',
             f'<text x="4" y="{pad_t + h / 2:.0f}">{escape(unit)}</text>',
             '<polyline fill="none" stroke="#1f77b4" stroke-width="1.5" points="'
             + " ".join(xy(i, v) for i, v in enumerate(vals)) + '"/>']
    parts += [f'<circle cx="{xy(i, v).split(",")[0]}" cy="{xy(i, v).split(",")[1]}" r="2" fill="#1f77b4"/>'
              for i, v in enumerate(vals)]
    if change_index is not None and 0 < change_index < n:
        x = xy(change_index - 0.5, lo).split(",")[0]
        parts.append(f'<line x1="{x}" y1="{pad_t}" x2="{x}" y2="{pad_t + h}" stroke="#d62728" stroke-width="1.5"/>')
        for a, b in ((0, change_index), (change_index, n)):
            m = sum(vals[a:b]) / (b - a)
            p1, p2 = xy(a, m), xy(b - 1, m)
            parts.append(f'<line x1="{p1.split(",")[0]}" y1="{p1.split(",")[1]}" x2="{p2.split(",")[0]}" '
                         f'y2="{p2.split(",")[1]}" stroke="#555" stroke-dasharray="4,3"/>')
    parts.append("</svg>\n")
    return "\n".join(parts)


def write_plot(ev: Evidence, path: str | Path) -> Path:
    """Write the evidence's series plot as SVG to ``path``; returns the path."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    unit = ev.key.unit if ev.key else ""
    p.write_text(plot_svg(ev.values, ev.change.index if ev.change else None, ev.title, unit))
    return p
