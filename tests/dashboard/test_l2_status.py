"""An investigated L2 regression carries a status code beside its text (``l2_regressions``): the
validation page marks a change point confirmed by the code, never by the words a person reads;
rows stored by an earlier release get their code from their text when the store is upgraded."""
from __future__ import annotations

import sqlite3

from aiohttp.test_utils import TestClient, TestServer

from bot.dashboard.web import Dashboard, make_dashboard_app
from bot.store import Store
from tests.support.dashboard_world import FORK, NOW, fill, sha

#: the shape of ``l2_regressions`` before it had a status code
EARLIER = """CREATE TABLE l2_regressions (key TEXT PRIMARY KEY, repo TEXT, series TEXT, good TEXT, bad TEXT,
             status TEXT, culprit TEXT, issue INTEGER, backout_pr INTEGER, time FLOAT);
             CREATE INDEX idx_l2_regressions_repo ON l2_regressions (repo);"""

#: benchmark → (status text the L2 service wrote, its code)
STATUSES = {"mm": ("not confirmed: not significant (p=0.21 > 0.01)", "not-confirmed"),
            "sm": ("bisected", "bisected"),
            "ln": ("suspects", "suspects"),
            "ce": ("not confirmed: no measurement on last-good or first-bad", "not-confirmed")}
STEP = 8


def _series(store: Store, benchmark: str) -> str:
    """A 12-point TFLOP/s series of ``benchmark`` on FORK dropping 10 % at :data:`STEP`; returns its key."""
    for k in range(12):
        value = (100.0 if k < STEP else 90.0) * (1 + 0.003 * ((k * 7) % 5 - 2) / 2)
        store.db["l2_points"].insert({"repo": FORK, "benchmark": benchmark, "impl": "triton", "metric": "tflops",
                                      "shape": "4096", "dtype": "fp16", "platform": "h100", "unit": "TFLOP/s",
                                      "sha": sha(benchmark, k), "seq": k, "time": int(NOW - (12 - k) * 3600),
                                      "value": value, "repeats_json": "[]", "ok": 1})
    return f"{benchmark}[triton]:4096:fp16@h100"


async def test_a_regression_stored_by_the_earlier_release_is_confirmed_by_its_code(tmp_path):
    """A store of the release before status codes holds investigated regressions whose ``status``
    is the text the L2 service wrote. After the upgrade each row has the code of its text, the
    text a person reads is unchanged, and the validation page's change points are confirmed
    exactly where the code says a confirmation run found the regression (bisected or suspects)."""
    path = tmp_path / "forksync.db"
    conn = sqlite3.connect(path)
    conn.executescript(EARLIER)
    for b, (text, _code) in STATUSES.items():
        conn.execute("INSERT INTO l2_regressions VALUES (?, ?, ?, ?, ?, ?, '', 0, 0, ?)",
                     [f"{FORK}:{b}", FORK, f"{b}[triton]:4096:fp16@h100", sha(b, STEP - 1), sha(b, STEP), text, NOW - 60])
    conn.commit()
    conn.close()
    store = Store(path)
    fill(store, shared=False)
    for b in STATUSES:
        _series(store, b)
    assert {r["series"].split("[")[0]: r["status_code"] for r in store.db["l2_regressions"].rows} == \
        {b: code for b, (_text, code) in STATUSES.items()}
    c = TestClient(TestServer(make_dashboard_app(Dashboard(store=store, clock=lambda: NOW))))
    await c.start_server()
    try:
        r = await c.get(f"/api/v1/forks/{FORK}/validation")
        assert r.status == 200, await r.text()
        doc = await r.json()
    finally:
        await c.close()
        store.close()
    by = {s["series"].split("[")[0]: s for s in doc["l2"]}
    assert {b: [(cp["sha"], cp["confirmed"]) for cp in s["change_points"] if cp["alert"]] for b, s in by.items()} == \
        {b: [(sha(b, STEP), code != "not-confirmed")] for b, (_text, code) in STATUSES.items()}
    assert {b: [(g["status"], g["status_code"]) for g in s["regressions"]] for b, s in by.items()} == \
        {b: [st] for b, st in STATUSES.items()}
