"""Property-based: generated fork histories whose true ledger is known by construction.

Picks land in any order with any provenance form (forksync trailer, ``cherry-pick -x``, a user
trailer, a subject citation, bundles citing many PRs with the fork's own PR number appended —
sometimes equal to an upstream PR that was *not* picked — and bare patch-id matches); picks get
backed out (git's ``Revert "…"`` or Phabricator's ``Back out "…"``), back-outs get reverted, and
backed-out commits get picked again. The rebuilt ledger and pins must equal the model's.
"""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.config.forksync import IsolatedPickRules, ProvenanceRules, TrailerRule
from bot.core.ledger import build_ledger
from bot.core.pins import REACHED, compute_pins
from bot.model import HANDLED, CommitInfo, Disposition, FileChange

RULES = ProvenanceRules(trailers=[TrailerRule(name="reactor", pattern=r"^Reactor Cherry-pick Revision:\s*(?P<sha>[0-9a-f]{7,40})")])
NO_ISLANDS = IsolatedPickRules(max_gap=10_000)
METHODS = ("trailer", "x", "reactor", "subject", "patch-id")


def _sha(prefix: str, i: int) -> str:
    return (prefix + f"{i:x}").rjust(40, "0")[-40:] if len(prefix) == 1 else prefix


@st.composite
def histories(draw):
    n = draw(st.integers(3, 14))
    ups = [CommitInfo(sha=f"{i + 1:x}".rjust(40, "a"), parents=("0" * 40,), message=f"Upstream change {i} (#{300 + i})",
                      committer_time=1000 + i, files=(FileChange(f"f{i}"),), patch_id=f"{i:x}".rjust(40, "p"), pr=300 + i)
            for i in range(n)]
    truth: dict[int, str] = {}
    fork: list[CommitInfo] = []
    picks: list[tuple[str, tuple[int, ...], bool]] = []     # (fork sha, upstream idx, is_backout)
    steps = draw(st.integers(1, 12))
    t = 10_000
    for k in range(steps):
        t += 10
        fsha = f"{k + 1:x}".rjust(40, "f")
        action = draw(st.sampled_from(["pick", "pick", "bundle", "backout", "reland"]))
        free = [i for i in range(n) if truth.get(i) != "PICKED"]
        if action in ("pick", "bundle") and free:
            if action == "bundle":
                chosen = tuple(draw(st.lists(st.sampled_from(free), min_size=2, max_size=4, unique=True))) \
                    if len(free) >= 2 else tuple(free)
                unpicked = [i for i in range(n) if i not in chosen and truth.get(i) is None]
                own = 300 + unpicked[0] if unpicked and draw(st.booleans()) else 9000 + k
                cites = ", ".join(f"#{300 + i}" for i in chosen)
                msg = f"[Cherry-pick][BUNDLE] Cherry-pick {len(chosen)} upstream commits ({cites}) (#{own})"
                pid = f"{k:x}".rjust(40, "b")
            else:
                i = draw(st.sampled_from(free))
                chosen = (i,)
                u = ups[i]
                method = draw(st.sampled_from(METHODS))
                msg = {"trailer": f"{u.message}\n\nUpstream-Commit: {u.sha}",
                       "x": f"{u.message}\n\n(cherry picked from commit {u.sha})",
                       "reactor": f"[beta] [Cherry-pick] '{u.message}' (#{9000 + k})\n\nReactor Cherry-pick Revision: {u.sha}",
                       "subject": f"[beta] [Cherry-pick] '{u.message}' (#{9000 + k})",
                       "patch-id": f"Port fix {k} to the fork"}[method]
                pid = u.patch_id
            fork.append(CommitInfo(sha=fsha, parents=(), message=msg, committer_time=t, patch_id=pid))
            picks.append((fsha, chosen, False))
            for i in chosen:
                truth[i] = "PICKED"
        elif action == "backout" and picks:
            target_sha, chosen, was_backout = draw(st.sampled_from(picks))
            target = next(c for c in fork if c.sha == target_sha)
            same_subject = [c for c in fork if c.subject == target.subject]
            if len(same_subject) > 1 or draw(st.booleans()):
                msg = f'Revert "{target.subject}"\n\nThis reverts commit {target.sha}.'
            else:
                msg = f'Back out "{target.subject}"\n\nbreaks trunk'
            fork.append(CommitInfo(sha=fsha, parents=(), message=msg, committer_time=t, patch_id=f"{k:x}".rjust(40, "c")))
            picks.append((fsha, chosen, not was_backout))
            for i in chosen:
                truth[i] = "REVERTED" if not was_backout else "PICKED"
        elif action == "reland":
            pass
    return ups, fork, truth


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories())
def test_rebuilt_ledger_and_pins_equal_the_model(h):
    ups, fork, truth = h
    led = build_ledger(ups, fork, rules=RULES, isolated=NO_ISLANDS)
    want = [truth.get(i, "PENDING") for i in range(len(ups))]
    assert [e.disposition.value for e in led.entries] == want
    p = compute_pins(led.entries, base_sha="0" * 40, base_time=0, rules=NO_ISLANDS)
    reached = [i for i, d in enumerate(want) if Disposition(d) in REACHED]
    assert p.frontier.index == (reached[-1] if reached else -1)
    contiguous = -1
    for i, d in enumerate(want):
        if Disposition(d) not in HANDLED:
            break
        contiguous = i
    assert p.contiguous.index == contiguous
    f = p.frontier.index
    assert p.backlog == sum(1 for d in want[:max(f, 0)] if Disposition(d) not in HANDLED)
    assert p.not_reached == len(want) - f - 1
