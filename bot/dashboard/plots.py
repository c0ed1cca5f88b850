"""The dashboard's plots as plotly figures (``plotly==7.1.0``), built from a page's document.

A figure is plain plotly JSON (``{"data": [...], "layout": {...}}``, the schema ``Plotly.newPlot``
reads), written directly rather than through ``plotly.graph_objects``, whose validation costs
more than the rest of a page; the page hands it to ``Plotly.newPlot``; the library's own ``plotly.min.js`` is served from the installed package
(:func:`plotly_js_path`), so the plots work with no network. Hover shows the values; the time
axes zoom. Each figure's first trace holds one point per data point of the document (on the
overview: per current one), so a test can count them.
"""
from __future__ import annotations

import html
import json
from functools import lru_cache
from pathlib import Path

_AXIS = dict(gridcolor="#e5ecf6", zerolinecolor="#c8d4e3", linecolor="#c8d4e3")
_LAYOUT = dict(margin=dict(l=56, r=56, t=32, b=40), height=340, hovermode="x unified", paper_bgcolor="#fff",
               plot_bgcolor="#fff", font=dict(family="sans-serif", size=12), legend=dict(orientation="h", y=-0.3))


class Figure:
    """A figure as plotly JSON: traces in ``data``, options in ``layout``."""

    def __init__(self):
        self.data: list[dict] = []
        self.layout: dict = {}

    def add_trace(self, trace: dict) -> None:
        self.data.append(trace)

    def update_layout(self, **kw) -> None:
        self.layout.update(kw)


def Scatter(**kw) -> dict:  # noqa: N802 - named as plotly's trace type
    return {"type": "scatter", **kw}


@lru_cache(maxsize=1)
def plotly_js_path() -> Path:
    """The ``plotly.min.js`` bundled in the installed plotly package. Raises FileNotFoundError
    naming the path when the package was installed without it."""
    import plotly
    p = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    if not p.is_file():
        raise FileNotFoundError(f"{p}: plotly's bundled plotly.min.js is missing; reinstall plotly==7.1.0")
    return p


def _json(fig: Figure) -> str:
    # no "<", ">" or "&" inside the page's <script> element that carries it: "</" would end it,
    # and "<!--" followed by "<script" (a stored series name, unit or id) puts the HTML parser in
    # the script's double-escaped state, where the element's own "</script>" no longer closes it
    # and the rest of the page becomes script text; JSON.parse reads the \u escapes back
    text = json.dumps({"data": fig.data, "layout": fig.layout}, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def overview_figure(doc: dict) -> str:
    """Days Behind (left axis) and Backlog (right axis) over time, landings marked. A point of a
    failed refresh of upstream (``source: fetch-failed``) holds the last good numbers, not
    current ones: it is a gap in those lines and a grey point of a trace of its own that says so.
    A backfilled point before the fork's first own commit (``source: backfill-before-fork``,
    :func:`bot.sync.ingest.before_first_own_commit`) is upstream's own past, not the fork's lag:
    it stays out of those lines too, drawn faint in a trace that says so."""
    s = doc["series"]
    x = [p["at"] for p in s]
    seen = [p["source"] not in ("fetch-failed", "backfill-before-fork") for p in s]

    def current(key: str) -> list:
        return [p[key] if ok else None for p, ok in zip(s, seen)]
    fig = Figure()
    fig.add_trace(Scatter(x=x, y=current("days_behind"), name="Days Behind", mode="lines+markers",
                             hovertemplate="%{y:.2f} days<extra>Days Behind</extra>"))
    fig.add_trace(Scatter(x=x, y=current("backlog"), name="Backlog Commits", mode="lines+markers", yaxis="y2",
                             hovertemplate="%{y} commits<extra>Backlog</extra>"))
    fig.add_trace(Scatter(x=x, y=current("contiguous_lag_days"), name="contiguous pin lag", mode="lines",
                             line=dict(dash="dot"), hovertemplate="%{y:.2f} days<extra>pin lag</extra>"))
    early = [p for p in s if p["source"] == "backfill-before-fork"]
    if early:
        fig.add_trace(Scatter(x=[p["at"] for p in early], y=[p["days_behind"] for p in early],
                                 name="before the fork's first own commit", mode="markers",
                                 marker=dict(symbol="circle-open", size=6, color="#c7c7c7"),
                                 hovertemplate="%{y:.2f} days: the fork had no own commit yet, its tip was one "
                                               "of upstream's (upstream's past, not the fork's lag)<extra>before the fork</extra>"))
    failed = [p for p in s if p["source"] == "fetch-failed"]
    if failed:
        fig.add_trace(Scatter(x=[p["at"] for p in failed], y=[p["days_behind"] for p in failed],
                                 name="upstream not seen (refresh failed)", mode="markers",
                                 marker=dict(symbol="circle-open", size=8, color="#7f7f7f"),
                                 hovertemplate="%{y:.2f} days as last seen: the refresh of upstream failed<extra>stale</extra>"))
    by_at = {p["at"]: p["days_behind"] for p in s}
    lx = [ld["at"] for ld in doc["landings"]]
    fig.add_trace(Scatter(x=lx, y=[by_at.get(t) for t in lx], name="landing (frontier moved)", mode="markers",
                             marker=dict(symbol="triangle-up", size=10, color="#2ca02c"),
                             customdata=[ld["frontier"][:12] for ld in doc["landings"]],
                             hovertemplate="frontier → %{customdata}<extra>landing</extra>"))
    fig.update_layout(**_LAYOUT, xaxis=dict(type="date", title=dict(text="UTC"), **_AXIS),
                      # plain numbers: plotly's default SI suffixes write 0.0002 days as "200μ"
                      yaxis=dict(title=dict(text="days"), rangemode="tozero", exponentformat="none", **_AXIS),
                      yaxis2=dict(title=dict(text="commits"), overlaying="y", side="right", rangemode="tozero", showgrid=False))
    return _json(fig)


def _as_written(text: str) -> str:
    """Stored text for a place where plotly reads its subset of HTML (hover labels, titles, legend
    names): ``&``, ``<`` and ``>`` as the entities plotly turns back into those characters, so
    ``<b>`` is shown, never applied, and ``%`` too, since plotly also fills ``%{…}`` fields in
    titles (from the layout's ``meta``), where "%{y}" would vanish. In a hover label it goes as
    the trace's ``meta``, never concatenated into the template."""
    return html.escape(text, quote=False).replace("%", "&#37;")


def l2_figure(series: dict) -> str:
    """One L2 series by landing order, change points as red markers (confirmed: filled); those
    merged into a kept one as grey open circles, apart."""
    pts = series["points"]
    x = list(range(len(pts)))
    fig = Figure()
    fig.add_trace(Scatter(x=x, y=[p["value"] for p in pts], name=_as_written(series["series"]), mode="lines+markers",
                             customdata=[[p["sha"][:12], p["time"] or ""] for p in pts], meta=_as_written(series["unit"]),
                             hovertemplate="%{y:.4g} %{meta}<br>%{customdata[0]} %{customdata[1]}<extra></extra>"))
    # a change point merged into a kept one never alerts: drawn apart, so it does not read as one
    cps = [c for c in series["change_points"] if not c.get("merged")]
    gone = [c for c in series["change_points"] if c.get("merged")]
    fig.add_trace(Scatter(x=[c["index"] for c in cps], y=[pts[c["index"]]["value"] for c in cps], name="change point",
                             mode="markers", marker=dict(size=12, color="#d62728",
                                                         symbol=["x" if c["confirmed"] else "x-open" for c in cps]),
                             customdata=[[c["sha"][:12], f"{c['rel_shift']:+.1%}", "confirmed" if c["confirmed"] else "not confirmed"]
                                         for c in cps],
                             hovertemplate="%{customdata[0]} %{customdata[1]} (%{customdata[2]})<extra>change point</extra>"))
    if gone:
        fig.add_trace(Scatter(x=[c["index"] for c in gone], y=[pts[c["index"]]["value"] for c in gone],
                                 name="merged change point", mode="markers",
                                 marker=dict(size=9, color="#7f7f7f", symbol="circle-open"),
                                 customdata=[[c["sha"][:12], f"{c['rel_shift']:+.1%}",
                                              f"merged into {c['merged_into'][:12]}" if c.get("merged_into") else "merged away"]
                                             for c in gone],
                                 hovertemplate="%{customdata[0]} %{customdata[1]} (%{customdata[2]})<extra>merged change point</extra>"))
    fig.update_layout(**{**_LAYOUT, "height": 260, "hovermode": "closest"},
                      xaxis=dict(title=dict(text="landed commit (order)"), **_AXIS),
                      yaxis=dict(title=dict(text=_as_written(series["unit"])), **_AXIS))
    return _json(fig)


def units_figure(doc: dict) -> str:
    """The stacked-chain dependencies: units as nodes placed by depth (a unit lands after those to
    its left), an arrow-less line per dependency; colour by gate state."""
    units = doc["units"]
    deps = {u["id"]: [d for d in u["depends_on"] if any(v["id"] == d for v in units)] for u in units}
    depth: dict[str, int] = {}

    def d(uid: str, seen=()) -> int:
        if uid not in depth:
            depth[uid] = 0 if uid in seen else 1 + max((d(x, seen + (uid,)) for x in deps[uid]), default=-1)
        return depth[uid]

    rows: dict[int, int] = {}
    pos = {}
    for u in units:
        k = d(u["id"])
        pos[u["id"]] = (k, rows.get(k, 0))
        rows[k] = rows.get(k, 0) + 1
    colour = {"green": "#2ca02c", "red": "#d62728", "waiting for L1": "#1f77b4", "blocked at a conflict": "#ff7f0e",
              "blocked by GitHub": "#8c564b", "blocked: a pick failed": "#e377c2", "not opened": "#7f7f7f",
              "waiting on a check that never reported": "#bcbd22"}
    fig = Figure()
    fig.add_trace(Scatter(x=[pos[u["id"]][0] for u in units], y=[-pos[u["id"]][1] for u in units], mode="markers+text",
                             text=[u["id"] for u in units], textposition="bottom center", name="unit", cliponaxis=False,
                             marker=dict(size=16, color=[colour.get(u["gate"], "#7f7f7f") for u in units]),
                             customdata=[[u["kind"], u["gate"], f"#{u['pr']}" if u["pr"] else "no PR"] for u in units],
                             hovertemplate="%{text}<br>%{customdata[0]} · %{customdata[2]}<br>%{customdata[1]}<extra></extra>"))
    ex, ey = [], []
    for e in doc["edges"]:
        (x0, y0), (x1, y1) = pos[e["to"]], pos[e["from"]]
        ex += [x0, x1, None]
        ey += [-y0, -y1, None]
    fig.add_trace(Scatter(x=ex, y=ey, mode="lines", name="lands after", line=dict(color="#999"), hoverinfo="skip"))
    fig.update_layout(**{**_LAYOUT, "height": max(220, 70 * max(rows.values(), default=1)), "hovermode": "closest"},
                      xaxis=dict(title=dict(text="depth (lands after the units to its left)"), dtick=1, zeroline=False,
                                 range=[-0.5, max(rows, default=0) + 0.5], **_AXIS),
                      yaxis=dict(visible=False, range=[-max(rows.values(), default=1) + 0.5, 0.5]), showlegend=False)
    return _json(fig)


__all__ = ["Figure", "Scatter", "plotly_js_path", "overview_figure", "l2_figure", "units_figure"]
