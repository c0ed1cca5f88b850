"""Property-based, on real git: generated fork histories (picks in any order with any provenance,
bundles, back-outs with ``git revert``, re-lands, re-picks) rebuilt by ``load_state`` must give
the ledger known by construction. Few examples: each builds two real repositories."""
from __future__ import annotations

import itertools
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.config.forksync import TrailerRule, load_config
from bot.demo.repobuilder import RepoBuilder
from bot.store import Store
from bot.sync.ingest import load_state

T0 = 1_767_225_600
_run = itertools.count()


@st.composite
def plans(draw):
    n = draw(st.integers(3, 6))
    actions = draw(st.lists(st.tuples(st.sampled_from(["pick", "pick", "bundle", "backout", "reland"]),
                                      st.integers(0, 1000), st.sampled_from(["trailer", "x", "reactor", "subject",
                                                                            "patch-id"])),
                            min_size=1, max_size=6))
    return n, actions


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(plans())
def test_real_git_histories_rebuild_to_the_model(plan):
    n, actions = plan
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        up = RepoBuilder.init(tmp / "up")
        up.commit("Base (#1)", {"README": "r\n"}, when=T0)
        fork = up.clone(tmp / "fork")
        ups = [up.commit(f"Upstream change {i} (#{300 + i})", {f"f{i}.txt": f"{i}\n"}, when=T0 + 60 * (i + 1))
               for i in range(n)]
        fork.add_remote("upstream", up.path)
        truth: dict[int, str] = {}
        owner: dict[int, str] = {}                # upstream index -> fork commit whose change is live
        landed: dict[str, tuple[int, ...]] = {}   # pick/re-land commit -> upstream indexes
        backouts: dict[str, tuple[str, tuple[int, ...]]] = {}   # back-out -> (commit, indexes)
        t = T0 + 10_000
        for k, (kind, r, method) in enumerate(actions):
            t += 60
            free = [i for i in range(n) if truth.get(i) != "PICKED"]
            if kind in ("pick", "bundle") and free:
                if kind == "bundle" and len(free) >= 2:
                    chosen = tuple(sorted(free[j] for j in {r % len(free), (r // 7) % len(free)}))
                    fork.write({f"f{i}.txt": f"{i}\n" for i in chosen})
                    cites = ", ".join(f"#{300 + i}" for i in chosen)
                    sha = fork.commit(f"[Cherry-pick][BUNDLE] {len(chosen)} upstream ({cites}) (#{9000 + k})", when=t)
                else:
                    i = free[r % len(free)]
                    chosen, u = (i,), ups[i]
                    if method == "x":
                        sha = fork.cherry_pick(u, when=t, x=True)
                    elif method == "trailer":
                        sha = fork.cherry_pick(u, when=t, trailer=f"Upstream-Commit: {u}")
                    elif method == "reactor":
                        sha = fork.cherry_pick(u, when=t, trailer=f"Reactor Cherry-pick Revision: {u}")
                    elif method == "subject":
                        sha = fork.cherry_pick(u, when=t, message=f"[beta] [Cherry-pick] 'Upstream change {i} (#{300 + i})' (#{9000 + k})\n")
                    else:
                        sha = fork.cherry_pick(u, when=t, message=f"Port fix {k}\n")
                landed[sha] = chosen
                for i in chosen:
                    truth[i], owner[i] = "PICKED", sha
            elif kind == "backout":
                live = [c for c, idx in landed.items() if all(truth.get(i) == "PICKED" and owner.get(i) == c for i in idx)]
                if live:
                    c = live[r % len(live)]
                    sha = fork.revert(c, when=t)
                    backouts[sha] = (c, landed.pop(c))
                    for i in backouts[sha][1]:
                        truth[i] = "REVERTED"
                        owner.pop(i, None)
            elif kind == "reland":
                ok = [b for b, (c, idx) in backouts.items() if all(truth.get(i) == "REVERTED" and i not in owner for i in idx)]
                if ok:
                    b = ok[r % len(ok)]
                    sha = fork.revert(b, when=t)
                    _, idx = backouts.pop(b)
                    landed[sha] = idx
                    for i in idx:
                        truth[i], owner[i] = "PICKED", sha
        cfg = load_config(None, {"upstream.url": str(up.path), "fork.url": str(fork.path)})
        cfg = cfg.model_copy(update={"cache_dir": str(tmp / "cache"), "provenance": cfg.provenance.model_copy(update={
            "trailers": [TrailerRule(name="reactor", pattern=r"^Reactor Cherry-pick Revision:\s*(?P<sha>[0-9a-f]{7,40})")]})})
        state = load_state(cfg, store=Store())
        got = [state.ledger.by_sha[u].disposition.value for u in ups]
        assert got == [truth.get(i, "PENDING") for i in range(n)]
        next(_run)
