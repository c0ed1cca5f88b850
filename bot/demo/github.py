"""``forksync demo``, GitHub part: the whole loop against a local GitHub, watchable without an account.

:func:`run_github_demo` starts the local GitHub (:mod:`bot.fakegithub`) and the forksync app
(:mod:`bot.demo.github_world`) in this process and plays, printing each step:

1. the App is installed on upstream and fork → the fork is adopted, the status issue appears;
2. upstream moves (``u10``…``u18`` pushed) → push webhook → bundle and chain PRs open, labelled,
   with templated bodies;
3. the maintainer defers the conflicting layout commit with a ``/forksync defer`` comment → the
   draft chain PR that carried only that commit is closed by forksync, saying why;
4. the maintainer merges the bundle through the API (rebase) → ledger, pins, status issue update;
5. the fork turns validation on (``.github/forksync.yml`` gains the ``kernels-cpu`` L1 suite);
6. upstream adds the reference kernels (``u19``) → bundle PR → the local runner runs the suite
   → ``forksync/L1/kernels-cpu`` and ``forksync/gate`` check runs → the bot merges it;
7. upstream breaks the fused softmax (``u20``) → L1 red → the gate holds the PR; the maintainer
   closes it with "defer: …" → the commit is DEFERRED_BLOCKED;
8. upstream quietly drops three matmul tests (``u21``) → the suite ran 7 of 10 tests → the gate
   is red (saturated validation).

The bot's own PRs are validated by the app's periodic reconcile pass
(:func:`bot.app.schedules.reconcile_tick`) because the loop guard drops their webhooks; the demo
runs that validation for the new PR at once (:meth:`ValidationService.validate_pr`) instead of
waiting for the tick.

Returns 0 when every step reached its expected outcome, 1 otherwise (the first unexpected
outcome is printed). ``outcome`` (a :class:`Outcome`) receives what happened, for tests.
"""
from __future__ import annotations

import asyncio
import re
from pathlib import Path

from rich.console import Console
from rich.rule import Rule
from rich.text import Text

from bot.demo.github_show import Outcome, Show, check_runs, ledger_of, open_prs, status_issue
from bot.demo.github_world import FORK, KERNEL_SUITE, MAINTAINER, UPSTREAM, World, build_world, close_world, push_upstream
from bot.demo.repobuilder import run_git


class DemoError(RuntimeError):
    """A step did not reach its expected outcome (the message says which and what was seen)."""


# ---------------------------------------------------------------------- the steps
async def _settle(w: World, show: Show) -> None:
    await w.app.settle()
    show.dead()


async def _validate_new_pr(w: World, show: Show, step: str, label: str) -> dict:
    """The bot's PR that carries upstream ``label``: validate it (the reconcile pass's work) and
    print its check runs."""
    sha = w.scenario.sha[label]
    prs = [p for p in await open_prs(w) if p["head"]["ref"].startswith("forksync/")]
    pr = None
    for p in prs:
        commits = [c async for c in w.maintainer.getiter(f"/repos/{FORK}/pulls/{p['number']}/commits")]
        if any(f"Upstream-Commit: {sha}" in c["commit"]["message"] for c in commits):
            pr = p
    if pr is None:
        raise DemoError(f"{step}: no open sync PR carries {label} ({sha[:12]})")
    show.prs([pr], title=f"the sync PR for {label}")
    show.out.step_pr[step] = pr["number"]
    show.say(f"reconcile: validating #{pr['number']} (the local runner runs the suite on its head) …", "dim")
    ctx = await w.app.ctx(w.inst)
    for note in await w.app.validation.validate_pr(ctx, FORK, pr["number"]):
        show.say(f"app: {note}", "dim")
    await _settle(w, show)
    cur = await w.maintainer.getitem(f"/repos/{FORK}/pulls/{pr['number']}")
    runs = await check_runs(w, cur["head"]["sha"])          # a merged PR keeps its last head
    show.checks(step, runs)
    show.out.prs[pr["number"]] = {**show.out.prs[pr["number"]], "state": cur["state"], "merged": bool(cur.get("merged"))}
    return cur


async def play(console: Console, workdir: Path, out: Outcome) -> None:
    """Build the world in ``workdir``, play the steps, print them to ``console``, fill ``out``.
    Raises :class:`DemoError` at the first step that did not reach its expected outcome."""
    console.print(Rule("forksync on GitHub — a local GitHub, no account needed"))
    console.print(Text("  building the demo scenario and starting the local GitHub and the app …", style="dim"))
    w = await build_world(workdir)
    out.shas = dict(w.scenario.sha)
    show = Show(console, w, out)
    try:
        await _play(w, show, console)
    finally:
        await close_world(w)


async def _play(w: World, show: Show, console: Console) -> None:
    s = w.scenario
    show.say(f"local GitHub   {w.fake.url}  (bot/fakegithub: GitHub's REST contract, signed webhooks)")
    show.say(f"{UPSTREAM:<14} upstream, at u9: {s.upstream.git('log', '-1', '--format=%s', s.sha['u9']).strip()}")
    show.say(f"{FORK:<14} the fork: the demo scenario's fork + .github/forksync.yml; maintainer @{MAINTAINER}")
    show.say(f"forksync app   webhooks at {w.app.url} (HMAC secret), SQLite queue, 1 worker, "
             "handlers, sync + validation services")

    # 1 ------------------------------------------------------------------------------------
    show.rule("1. The forksync App is installed on upstream and on the fork")
    w.fake.install("triton-lang")
    w.inst = w.fake.install("meta").id
    await _settle(w, show)
    show.status("installed", await status_issue(w))

    # 2 ------------------------------------------------------------------------------------
    show.rule("2. Upstream moves: u10 … u18 pushed to triton-lang/triton")
    push_upstream(w, s.sha["u18"])
    show.say("git push → push webhook → the app fetches, rebuilds the ledger, plans, applies, pushes, opens PRs",
             "dim")
    await _settle(w, show)
    prs = await open_prs(w)
    show.prs(prs)
    if not any("forksync:bundle" in [lab["name"] for lab in p["labels"]] for p in prs):
        raise DemoError("step 2: no bundle PR opened")
    bundle = next(p for p in prs if p["head"]["ref"].startswith("forksync/bundle-"))
    section = bundle["body"].split("### Picked", 1)[-1].split("###", 1)[0].strip().splitlines()
    body = [line for line in section if line.startswith("|")]     # the table: a line after it is no row
    show.say(f"#{bundle['number']} body (templated), picked commits:")
    for line in body[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        sha12 = re.sub(r"[\[\]`]|\(http[^)]*\)", "", cells[1])[:12]
        show.say(f"    {cells[0]}. {sha12}  {cells[-1]}")
    for p in prs:
        if p.get("draft"):
            m = re.search(r"Stopped at a conflict: upstream `([0-9a-f]{12})`", p.get("body") or "")
            files = re.findall(r"^\d+\. `([^`]+)` \((\w[\w/]*)\)", p.get("body") or "", re.M)
            show.say(f"#{p['number']} is a draft: the chain stopped at a conflict in upstream "
                     f"{show.named(m.group(1)) if m else '?'}; its branch ends with the conflict commit "
                     f"(diff3 markers in {', '.join(f for f, _ in files) or '?'}), waiting for a resolution")
            show.out.drafts[p["number"]] = m.group(1) if m else ""
    show.status("upstream moved", await status_issue(w))

    # 3 ------------------------------------------------------------------------------------
    show.rule("3. The maintainer defers the layout commit that conflicts with the fork")
    issue = await status_issue(w)
    line = "/forksync defer #114 conflicts with the fork's swizzle parameter; port by hand"
    show.say(f"@{MAINTAINER} on #{issue['number']}: {line}")
    await w.maintainer.post(f"/repos/{FORK}/issues/{issue['number']}/comments", data={"body": line})
    await _settle(w, show)
    replies = [c async for c in w.maintainer.getiter(f"/repos/{FORK}/issues/{issue['number']}/comments")]
    bot_reply = [c for c in replies if c["user"]["login"].endswith("[bot]")]
    if bot_reply:
        text = re.sub(r"<!--.*?-->", "", bot_reply[-1]["body"], flags=re.S)
        show.say(f"@{bot_reply[-1]['user']['login']} replies: " + " ".join(text.split())[:200])
    for number in show.out.drafts:
        # the draft carried only the deferred commit: forksync closes it, saying why on the PR
        pr = await w.maintainer.getitem(f"/repos/{FORK}/pulls/{number}")
        said = [c["body"] async for c in w.maintainer.getiter(f"/repos/{FORK}/issues/{number}/comments")
                if c["user"]["login"].endswith("[bot]") and "<!-- forksync:decided:" in c["body"]]
        decided = re.findall(r"^\| `([0-9a-f]{12})` .*? \| \*\*([A-Z_]+)\*\* \|", said[-1] if said else "", re.M)
        show.out.prs[number] = {**show.out.prs[number], "state": pr["state"], "merged": bool(pr.get("merged"))}
        show.out.closed[number] = decided
        if pr["state"] == "closed":
            show.say(f"#{number} closed by forksync: every commit it carried is decided ("
                     + ", ".join(f"{show.named(sha)} {d}" for sha, d in decided) + "); its branch is deleted, "
                     "and `/forksync reconsider` brings the commit back in a new unit")
    show.status("deferred", await status_issue(w))

    # 4 ------------------------------------------------------------------------------------
    show.rule(f"4. The maintainer lands bundle #{bundle['number']} (merge by rebase, through the API)")
    before = ledger_of(w)
    await w.maintainer.put(f"/repos/{FORK}/pulls/{bundle['number']}/merge",
                           data={"merge_method": "rebase", "sha": bundle["head"]["sha"]})
    show.say("pull_request.closed (merged) webhook → the app rebuilds ledger and pins, deletes the branch", "dim")
    await _settle(w, show)
    after = ledger_of(w)
    show.ledger("bundle landed", before, after)
    show.status("bundle landed", await status_issue(w))
    show.out.prs[bundle["number"]] = {**show.out.prs[bundle["number"]], "state": "closed", "merged": True}

    # 5 ------------------------------------------------------------------------------------
    show.rule("5. The fork turns validation on: .github/forksync.yml gains the kernels-cpu L1 suite")
    work = w.root / "fork-work"
    run_git(w.root, "clone", "-q", str(w.fork.path), str(work))
    cfg = work / ".github" / "forksync.yml"
    cfg.write_text(cfg.read_text() + KERNEL_SUITE)
    run_git(work, "-c", "user.name=Fiona Fork", "-c", "user.email=fiona@fork.example", "commit", "-q", "-am",
            "[forksync] Validate sync PRs with the kernels-cpu suite")
    run_git(work, "push", "-q", "origin", "HEAD:main")
    show.say("suite kernels-cpu: pytest examples/kernels/test_kernels.py -k fp32 under TRITON_INTERPRET=1, "
             "expected_tests: 10, required")
    await _settle(w, show)

    # 6 ------------------------------------------------------------------------------------
    show.rule("6. Upstream adds the reference kernels (u19): validated, gated, merged by the bot")
    push_upstream(w, s.sha["u19"])
    await _settle(w, show)
    pr = await _validate_new_pr(w, show, "kernels added", "u19")
    if not pr.get("merged"):
        raise DemoError(f"step 6: #{pr['number']} was not merged by the bot (gate: {show.out.gate.get('kernels added')})")
    show.say(f"#{pr['number']} merged by the bot (rebase); its landing rebuilt ledger and pins", "green")
    show.status("kernels landed", await status_issue(w))

    # 7 ------------------------------------------------------------------------------------
    show.rule("7. Upstream breaks the fused softmax (u20): L1 red, the gate holds the PR")
    push_upstream(w, s.sha["u20"])
    await _settle(w, show)
    pr = await _validate_new_pr(w, show, "softmax broken", "u20")
    if pr.get("merged"):
        raise DemoError(f"step 7: #{pr['number']} with a broken kernel was merged")
    show.say(f"#{pr['number']} stays open: the gate holds it", "red")
    reason = "defer: breaks softmax for rows that are not a power of two; wait for upstream's fix"
    show.say(f"@{MAINTAINER} closes #{pr['number']}: \"{reason}\"")
    await w.maintainer.post(f"/repos/{FORK}/issues/{pr['number']}/comments", data={"body": reason})
    await w.maintainer.patch(f"/repos/{FORK}/pulls/{pr['number']}", data={"state": "closed"})
    await _settle(w, show)
    show.out.prs[pr["number"]] = {**show.out.prs[pr["number"]], "state": "closed", "merged": False}

    # 8 ------------------------------------------------------------------------------------
    show.rule("8. Upstream quietly drops three matmul tests (u21): the suite ran fewer tests, gate red")
    push_upstream(w, s.sha["u21"])
    await _settle(w, show)
    pr = await _validate_new_pr(w, show, "tests dropped", "u21")
    if pr.get("merged"):
        raise DemoError(f"step 8: #{pr['number']} whose suite ran short was merged")
    show.say(f"#{pr['number']} stays open: 7 tests ran where 10 are expected", "red")

    # end ----------------------------------------------------------------------------------
    show.rule("Where the fork stands now")
    show.ledger("end", after, ledger_of(w), columns=(f"after #{bundle['number']} landed", "now"))
    show.status("end", await status_issue(w))
    show.prs([await w.maintainer.getitem(f"/repos/{FORK}/pulls/{n}") for n in sorted(show.out.prs)],
             title="every PR of the demo", with_state=True)
    show.out.ok = True


def run_github_demo(console: Console, workdir: Path, outcome: Outcome | None = None) -> int:
    """Play the GitHub demo in ``workdir`` (created; must not hold an earlier demo). Returns 0 when
    every step reached its expected outcome, 1 when one did not (printed), 2 when the demo cannot
    start (``workdir`` already holds a demo, or the reference kernels are not next to the package).
    ``outcome`` receives what was seen. Runs its own event loop: call it outside one."""
    import logging

    out = outcome if outcome is not None else Outcome()
    quiet = logging.NullHandler()          # the app's warnings are shown as steps (⚠ lines), not as log noise
    logging.getLogger("bot").addHandler(quiet)
    try:
        asyncio.run(play(console, Path(workdir), out))
    except DemoError as e:
        console.print(Text(f"  demo stopped: {e}", style="bold red"))
        return 1
    except (FileNotFoundError, FileExistsError, ValueError) as e:      # no kernels here, a used folder
        console.print(Text(f"  the GitHub demo cannot start: {e}", style="bold red"))
        return 2
    finally:
        logging.getLogger("bot").removeHandler(quiet)
    return 0


__all__ = ["run_github_demo", "play", "Outcome", "DemoError"]
