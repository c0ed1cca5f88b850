"""A unit held by a rewind (upstream's branch moved back past some of its commits:
:mod:`bot.sync.rewind`) that an open chain lands after, on the local GitHub with the real bot,
real git and the real store. The held unit is neither merged, closed nor rebuilt until upstream
returns or builds on the rewound history, so "Lands after #N … merged once it has landed" alone
would promise a landing that waits on upstream: the chain's body says the unit is held and what
ends the hold, as the status issue says it of the held unit, for as long as the hold stands."""
from __future__ import annotations

from bot.sync import store as sync_store
from tests.e2e.test_conflict_owed import source, stacked_world  # noqa: F401
from tests.e2e.test_upstream_rewind import rewind_upstream
from tests.support.github import commit_files, git
from tests.support.sync_world import open_prs, status_body


async def bundle_held_under_a_chain(w, up_src, upstream):
    """A bundle (python/h.py, then python/m.py) and a chain between its two commits that lands
    after it (its second pick needs the bundle's first); upstream's ``main`` then moves back to
    the chain's last commit, past the bundle's second only. ``(b0, b3, bundle PR, chain PR)``."""
    b0 = commit_files(up_src, {"python/h.py": "h = 1\n"}, "Speed up h (#100)")
    c1 = commit_files(up_src, {"third_party/amd/x.cpp": source(z="1")}, "AMD: set z (#101)")
    c2 = commit_files(up_src, {"third_party/amd/x.cpp": source(z="2"), "python/h.py": "h = 2\n"}, "AMD: z and h (#102)")
    b3 = commit_files(up_src, {"python/m.py": "m = 1\n"}, "Add m (#103)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    bundle, chain = await open_prs(w.alice)
    assert (bundle["head"]["ref"], chain["head"]["ref"]) == (f"forksync/bundle-{b0[:12]}", f"forksync/chain-{c1[:12]}")
    row = sync_store.branch_row(w.bot.store, "meta/triton", chain["head"]["ref"])
    assert f"bundle-{b0[:12]}" in row["depends_json"], row["depends_json"]
    assert "is held" not in chain["body"], chain["body"]
    rewind_upstream(up_src, upstream, c2)
    await w.bot.settle()
    rewound = sync_store.load_status(w.bot.store, "meta/triton").rewound
    assert [u["id"] for u in rewound["units"]] == [f"bundle-{b0[:12]}"], "not the case under test: " + str(rewound)
    return b0, b3, bundle, chain


async def test_a_chain_that_lands_after_a_held_bundle_says_it_is_held_and_what_ends_the_hold(stacked_world):  # noqa: F811
    w, up_src, upstream = stacked_world
    b0, b3, bundle, chain = await bundle_held_under_a_chain(w, up_src, upstream)
    body = (await w.pr(chain["number"]))["body"]
    assert f"**Lands after** #{bundle['number']} (`bundle-{b0[:12]}`)" in body, body
    [line] = [x for x in body.splitlines() if "is held" in x]
    assert line == (
        f"- #{bundle['number']} (`bundle-{b0[:12]}`) is held: upstream's `main` moved back past 1 of "
        f"its commits (`{b3[:12]}`), and forksync neither merges, closes nor rebuilds it until upstream builds "
        "on the rewound history (then it is closed or rebuilt without them, and this pull request says what it "
        f"lands after then) or returns to `{b3[:12]}` (then it lands as planned). This pull request waits for it."), line
    assert (await w.pr(bundle["number"]))["state"] == "open"


async def test_the_chain_stops_saying_the_bundle_is_held_once_upstream_returns(stacked_world):  # noqa: F811
    w, up_src, upstream = stacked_world
    b0, b3, bundle, chain = await bundle_held_under_a_chain(w, up_src, upstream)
    git(up_src, "reset", "-q", "--hard", b3)
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    assert not sync_store.load_status(w.bot.store, "meta/triton").rewound
    body = (await w.pr(chain["number"]))["body"]
    assert f"**Lands after** #{bundle['number']} (`bundle-{b0[:12]}`)" in body, body
    assert "is held" not in body and "moved back" not in body, body
    assert w.bot.deliveries("dead") == []


async def test_the_status_issue_says_the_unit_a_chain_waits_for_is_held(stacked_world):  # noqa: F811
    """The chain's line on the status issue says the bundle it waits for is held and why, as the
    chain's body does: "waits for #N" alone reads as a bundle about to land."""
    w, up_src, upstream = stacked_world
    b0, b3, bundle, chain = await bundle_held_under_a_chain(w, up_src, upstream)
    body = await status_body(w)
    [line] = [x for x in body.splitlines() if "<!-- retry:chain-" in x]
    assert line.endswith(
        f"waits for #{bundle['number']} (`bundle-{b0[:12]}`), held: upstream's `main` moved back past 1 of its "
        f"commits (`{b3[:12]}`), and forksync neither merges, closes nor rebuilds it until upstream builds on the "
        f"rewound history or returns to `{b3[:12]}`)"), line
    # once upstream returns, the chain waits for the bundle as for any other
    git(up_src, "reset", "-q", "--hard", b3)
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    [line] = [x for x in (await status_body(w)).splitlines() if "<!-- retry:chain-" in x]
    assert line.endswith(f"waits for #{bundle['number']} (`bundle-{b0[:12]}`))"), line
