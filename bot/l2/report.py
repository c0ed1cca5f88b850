"""Evidence for a regression found by L2 detection and bisection, and the texts built from it:
the regression issue (``templates/issues/regression.md.j2``), the back-out commit message and PR
body (``templates/prs/backout.md.j2``) carrying ``Upstream-Reverted: <sha> <reason>``, and a plot.

The plot is a plotly figure (the dashboard's library), exported as SVG (it renders inline on
GitHub when committed) by kaleido through Chromium. Pure functions: no I/O except
:func:`plot_svg`'s export and :func:`write_plot`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

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
    ``culprit_subject``/``upstream_sha``: of the culprit fork commit; ``culprit_author``: its
    author (a sync pick keeps the upstream author); ``upstream_url``: the upstream commit's web
    address ("" when the upstream is no web repository: :func:`upstream_commit_url`);
    ``backout_error``: why the back-out PR of a sync pick could not be opened ("" when it was, or
    none was due); ``backout_pr``: the back-out PR's number once it is open (0 before)."""

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
    culprit_author: str = ""
    upstream_url: str = ""
    backout_error: str = ""
    backout_pr: int = 0


_WEB_REPO = re.compile(r"^(?:(https?)://(?:[^@/]+@)?([^/]+)/|git@([\w.\-]+):)([\w.\-]+/[\w.\-]+?)(?:\.git)?/?$")


def upstream_commit_url(repo_url: str, sha: str | None) -> str:
    """Pure: the web address of upstream commit ``sha`` in the repository at ``repo_url``
    (``https://HOST/owner/name[.git]`` or ``git@HOST:owner/name.git`` →
    ``https://HOST/owner/name/commit/<sha>``, credentials dropped); "" for a local path, any other
    URL, or no sha."""
    m = _WEB_REPO.match(repo_url or "")
    if not (m and sha):
        return ""
    scheme, host = (m.group(1), m.group(2)) if m.group(2) else ("https", m.group(3))
    return f"{scheme}://{host}/{m.group(4)}/commit/{sha}"


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


class PlotUnavailable(RuntimeError):
    """The SVG export needs kaleido and a Chromium (Debian's ``chromium``); the message says which is missing."""


def plot_figure(values: Sequence[float], change_index: int | None = None, title: str = "", unit: str = ""):
    """The series as a plotly figure (the dashboard's library): one marker per point, the change
    point as a vertical red line and each side's mean as a dashed line. Raises ValueError for an
    empty series."""
    import plotly.graph_objects as go

    vals = [float(v) for v in values]
    if not vals:
        raise ValueError("plot_svg: empty series")
    n = len(vals)
    fig = go.Figure(go.Scatter(x=list(range(n)), y=vals, mode="lines+markers", name=unit or "value",
                               line=dict(color="#1f77b4", width=1.5), marker=dict(size=5)))
    if change_index is not None and 0 < change_index < n:
        fig.add_vline(x=change_index - 0.5, line=dict(color="#d62728", width=1.5))
        for a, b in ((0, change_index), (change_index, n)):
            m = sum(vals[a:b]) / (b - a)
            fig.add_shape(type="line", x0=a, x1=b - 1, y0=m, y1=m, line=dict(color="#555", dash="dash"))
    fig.update_layout(title=dict(text=title, font=dict(size=13)), template="plotly_white", showlegend=False,
                      margin=dict(l=60, r=10, t=36, b=30), font=dict(family="sans-serif", size=11),
                      xaxis=dict(title="landed commit (order)"), yaxis=dict(title=unit))
    return fig


def plot_svg(values: Sequence[float], change_index: int | None = None, title: str = "",
             unit: str = "", width: int = 640, height: int = 240) -> str:
    """:func:`plot_figure` as an SVG (renders inline on GitHub), exported by plotly's kaleido
    through Debian's Chromium. Raises ValueError for an empty series, :class:`PlotUnavailable`
    when kaleido or Chromium is missing."""
    import os

    import plotly.io as pio

    fig = plot_figure(values, change_index, title, unit)
    if os.path.exists("/usr/bin/chromium"):
        os.environ.setdefault("BROWSER_PATH", "/usr/bin/chromium")
    try:
        return pio.to_image(fig, format="svg", width=width, height=height).decode()
    except (ImportError, ValueError, RuntimeError, OSError) as e:
        raise PlotUnavailable(f"the SVG export needs kaleido==1.5.0 and Chromium (apt-get install chromium): "
                              f"{type(e).__name__}: {str(e)[:200]}") from None


def write_plot(ev: Evidence, path: str | Path) -> Path:
    """Write the evidence's series plot as SVG to ``path``; returns the path."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    unit = ev.key.unit if ev.key else ""
    p.write_text(plot_svg(ev.values, ev.change.index if ev.change else None, ev.title, unit))
    return p
