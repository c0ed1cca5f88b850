"""Sync PRs on the fork: open or update one PR per unit, never a duplicate, never overwrite a
person's commits; verify a person's resolution pushed to a chain branch.

Truth about "is there already a PR for this unit" is GitHub itself (``pulls/list`` with
``head=<owner>:forksync/<unit id>``), so a crash between creating the PR and recording it cannot
lead to a second PR. Table ``sync_branches`` (:mod:`bot.sync.store`) remembers the tip forksync last pushed to each
branch: a branch whose remote tip differs from it holds someone else's commits and is not
rebuilt (the bot comments instead, ``person_commits.md.j2``).

A branch's name does not make a PR forksync's: anyone who can open a PR picks the name, from a
fork of the fork too, and any base. :func:`not_forksyncs` says which PRs are forksync's own sync
PRs — a PR into another base than the unit's is never one; every path that lands, closes,
folds, resolves, blocks or merges a unit asks it first. A sync PR goes into the branch forksync
syncs, ``fork.ref`` (the fork's default branch unless its forksync.yml names another):
:func:`off_base` says why a PR into another base is left alone (the gate, whatever event brings
a PR up, acts on none), and :func:`find_open_pr` looks for the unit's PR among the PRs into that
base only. A PR a person opened into that base from the unit's branch is the unit's PR, and
theirs (:func:`opened_by_person`): forksync keeps its title, words and draft state.
"""
from __future__ import annotations

import hashlib
import json
import re

import gidgethub

from bot.core.logins import same_login
from bot.github.common import comment_once, render, split_repo
from bot.github.fork_config import load_fork_config
from bot.github.limits import BODY_LIMIT, MARGIN, fit_body, fit_title
from bot.sync import store as sync_store
from bot.templating import fence_after

TRAILER = re.compile(r"^Upstream-Commit:\s*([0-9a-f]{40})\s*$", re.MULTILINE)


def not_forksyncs(pr: dict, full_name: str, *, bot_login: str | None, recorded: bool, base: str,
                  unit_pr: int = 0, earlier: tuple[int, ...] | list[int] = ()) -> str:
    """Pure: why ``pr`` (a ``pulls/get`` or webhook ``pull_request`` object of ``full_name``) is
    not one of forksync's own sync PRs; ``""`` when it is. forksync's own

    1. has its head branch in ``full_name`` itself — not in a fork of it (``head.repo`` another
       repository, or null when that repository was deleted: GitHub);
    2. goes into ``base``, the unit's base (:func:`unit_base`: the branch forksync opened the
       unit's PR into). GitHub lets anyone with write access open more PRs from forksync's
       branch into other bases (a backport to ``release``); such a PR shares the unit's head but
       is never the unit's, whatever its author or the branch's row says;
    3. was opened by the App (``user.login`` is ``bot_login``, in any case:
       :func:`bot.core.logins.same_login`) or is on a branch forksync
       recorded pushing (``recorded``: its ``sync_branches`` row; a person's PR reopened on
       forksync's branch into the unit's base still carries forksync's unit) — but while the row
       names the unit's PR (``unit_pr``, its ``pr``), only that PR;
    4. is none of the ``earlier`` PRs: those of the units the branch carried before (closed,
       landed or re-planned, then planned again under the same unit id), even the App's own.

    Closing or merging a PR that is not forksync's must not land, close or delete anything of the
    unit, and a push seen through it is no resolution of the unit. Whether the head ref starts
    with ``github.branch_prefix`` is the caller's question: this one is about who owns the
    branch, which the name cannot say."""
    head = pr.get("head") or {}
    repo = (head.get("repo") or {}).get("full_name") or ""
    if repo != full_name:
        return (f"its head branch is in {repo}, not in {full_name}" if repo
                else "its head repository was deleted")
    into = str((pr.get("base") or {}).get("ref") or "")
    if into != base:
        return f"into `{into}`, not the unit's base `{base}`" if into else "its base branch is unknown"
    number = int(pr.get("number") or 0)
    if number and number in earlier:
        return "forksync's earlier sync PR from this branch, whose unit ended; the branch carries another unit now"
    second = bool(recorded and unit_pr and number and int(unit_pr) != number)
    if (recorded and not second) or same_login(bot_login, (pr.get("user") or {}).get("login")):
        return ""
    who = ((pr.get("user") or {}).get("login") or "").strip()
    if second:
        return f"opened by {'@' + who if who else 'someone else'} on forksync's branch, whose sync PR is #{unit_pr}"
    return f"opened by {'@' + who if who else 'someone else'} on a branch forksync did not push"


def unit_base(row: dict | None, fork_ref: str) -> str:
    """Pure: the branch the unit of ``row`` (its ``sync_branches`` row, or None) has its PR into:
    the ``base`` forksync recorded pushing it for, else ``fork_ref`` — ``fork.ref`` of the fork's
    configuration, the branch publish opens every sync PR into (rows written before the base was
    recorded, and branches forksync has no row for). Never GitHub's default branch as such: a fork
    syncing into ``fork-main`` while ``main`` is the default branch has no unit into ``main``."""
    return str((row or {}).get("base") or "") or fork_ref


async def fallback_ref(ctx, full_name: str, row: dict | None, fork_ref: str | None) -> str:
    """The ``fork_ref`` for :func:`unit_base` of ``row``: the caller's (it has the configuration
    at hand), else, only when ``row`` records no base, ``fork.ref`` of the fork's configuration
    read now (:func:`bot.github.fork_config.load_fork_config`, the one publish reads); ``""`` when
    the row's own base decides."""
    if fork_ref or (row or {}).get("base"):
        return fork_ref or ""
    return (await load_fork_config(ctx, full_name)).fork.ref


def off_base(pr: dict, base: str) -> str:
    """Pure: why forksync validates, updates and merges nothing of ``pr`` (a ``pulls/get``, webhook
    ``pull_request`` or ``check_run.pull_requests`` object) because of its base; ``""`` when it is
    into ``base``, the branch forksync syncs (``fork.ref`` of the trusted configuration: the one
    sync PRs are opened into, whether or not it is GitHub's default branch). A PR from forksync's
    branch into another base (a person's backport to ``release``, say) shares the unit's head:
    ``update-branch`` on it would merge that base into forksync's branch, a merge would land the
    unit there, and a gate check run would replace the unit's own on the same head."""
    into = str((pr.get("base") or {}).get("ref") or "")
    if into == base:
        return ""
    return f"into `{into}`, not `{base}`, the branch forksync syncs (fork.ref)" if into else "its base branch is unknown"


def speaks_for(row: dict | None, number: int) -> dict | None:
    """Pure: ``row`` (the ``sync_branches`` row of a PR's head branch, or None) as far as it says
    who owns PR ``number``: the row of a unit in flight speaks for its branch; the row of a unit
    that ended (landed, closed, re-planned: :func:`bot.sync.store.ended`) is history and speaks
    for that unit's own PR only — a redelivered close still finds its unit, and nobody's new PR
    from a branch of the same name (a person's, after forksync deleted it) is taken for forksync's
    or given the ended unit's record. None when it does not speak for ``number``."""
    if not sync_store.ended(row) or (number and int((row or {}).get("pr") or 0) == number):
        return row
    return None


def row_reason(pr: dict, full_name: str, row: dict | None, *, bot_login: str | None, fork_ref: str) -> str:
    """:func:`not_forksyncs` of ``pr`` against the ``sync_branches`` row of its head branch
    (None when forksync recorded none), as far as it speaks for the PR (:func:`speaks_for`):
    ``recorded``, ``unit_pr``, ``earlier`` and the unit's base (:func:`unit_base`) come from it."""
    row = speaks_for(row, int(pr.get("number") or 0))
    return not_forksyncs(pr, full_name, bot_login=bot_login, recorded=row is not None,
                         base=unit_base(row, fork_ref), unit_pr=int((row or {}).get("pr") or 0),
                         earlier=tuple(sync_store.earlier_prs(row)) if not sync_store.ended(row) else ())


def foreign_reason(store, full_name: str, pr: dict, *, bot_login: str | None, fork_ref: str) -> str:
    """:func:`row_reason` with the row read from the store (the PR's head ref among the fork's
    ``sync_branches``)."""
    branch = (pr.get("head") or {}).get("ref") or ""
    row = sync_store.branch_row(store, full_name, branch) if branch else None
    return row_reason(pr, full_name, row, bot_login=bot_login, fork_ref=fork_ref)


def is_own_sync_pr(store, full_name: str, pr: dict, *, prefix: str, bot_login: str | None,
                   fork_ref: str) -> bool:
    """Is ``pr`` forksync's own sync PR: head ref named ``prefix``… and :func:`foreign_reason` empty?"""
    return (str((pr.get("head") or {}).get("ref") or "").startswith(prefix)
            and not foreign_reason(store, full_name, pr, bot_login=bot_login, fork_ref=fork_ref))


def opened_by_person(pr: dict, bot_login: str | None) -> bool:
    """Pure: did someone other than forksync open ``pr`` (a ``pulls/get`` or ``pulls/list``
    object)? Its author (``user.login``) against ``bot_login``, as GitHub compares logins
    (:func:`bot.core.logins.same_login`). A person may open the PR from a unit's branch into the
    unit's base themselves — forksync's own PR for the unit closed, or its create refused — and it
    becomes the unit's PR (:func:`open_or_update_pr`), but its title, words and draft state stay
    theirs. False while forksync's own login is unknown (token mode before ``GET /user``
    answered): then no author can be told apart, and the marks in the body decide, as for any PR
    (:func:`refreshed`)."""
    author = (pr.get("user") or {}).get("login")
    return bool(bot_login) and bool(author) and not same_login(bot_login, author)


async def find_open_pr(gh, full_name: str, branch: str, base: str) -> dict | None:
    """The open PR from ``owner:branch`` into ``base`` (None if none). GitHub lets anyone with
    write access open more PRs from the same branch into other bases; those are not the unit's,
    and refreshing one would rewrite a person's title and body and record its number as the
    unit's PR (``pulls/list`` filters by ``base`` as well as ``head``)."""
    rv = split_repo(full_name)
    async for pr in gh.getiter("/repos/{owner}/{repo}/pulls{?state,head,base,per_page}",
                               {**rv, "state": "open", "head": f"{rv['owner']}:{branch}", "base": base,
                                "per_page": 100}):
        if pr.get("head", {}).get("ref") == branch and not off_base(pr, base):
            return pr
    return None


AGENT_REPORT = re.compile(r"<!-- forksync:agent-report:start -->.*?<!-- forksync:agent-report:end -->", re.S)


def keep_agent_report(old_body: str, new_body: str) -> str:
    """Pure: ``new_body`` with the agent-report section of ``old_body`` carried over (a body
    refresh must not drop the conflict agent's report, which reviewers need)."""
    m = AGENT_REPORT.search(old_body or "")
    if not m or AGENT_REPORT.search(new_body):
        return new_body
    return new_body.rstrip("\n") + "\n\n" + m.group(0) + "\n"


_OWN_START, _OWN_END = "<!-- forksync:body:start -->", "<!-- forksync:body:end -->"
_TITLE_SET = re.compile(r"<!-- forksync:title:([0-9a-f]{16}) -->")


def own_span(body: str) -> tuple[int, int] | None:
    """Pure: ``(start, end)`` offsets of forksync's section in a PR body, or None. The section
    starts at the first line that is exactly ``<!-- forksync:body:start -->`` outside a fenced code
    block (a person quoting the section's source in a fence quotes it, nothing more) and ends
    after the next ``<!-- forksync:body:end -->`` line; a section whose end line a person deleted
    ends after its title mark line (``<!-- forksync:title:… -->``), else at the body's end. Lines
    may end in CRLF (GitHub's web editor saves bodies that way)."""
    pos, fence, start, after_mark = 0, "", None, None
    for line in body.splitlines(keepends=True):
        bare = line.rstrip("\r\n")
        inside, fence = fence, fence_after(fence, bare)
        if not (inside or fence):       # not a code block's line (nor one of its fences)
            if start is None:
                if bare == _OWN_START:
                    start = pos
            elif bare == _OWN_END:
                return start, pos + len(line)
            elif after_mark is None and _TITLE_SET.fullmatch(bare):
                after_mark = pos + len(line)
        pos += len(line)
    if start is None:
        return None
    return start, after_mark if after_mark is not None else len(body)


def title_digest(title: str) -> str:
    """The mark of a title forksync set (sha256, 16 hex digits, of the stripped title): a body
    records it, so a later refresh can tell a title a person gave the PR from forksync's own."""
    return hashlib.sha256((title or "").strip().encode()).hexdigest()[:16]


def own_section(body: str, digest: str) -> str:
    """``body`` as forksync's section of a PR body (``templates/github/own_section.md.j2``:
    between ``<!-- forksync:body:start -->`` and ``<!-- forksync:body:end -->``, with the mark of
    the title forksync last set)."""
    return render("own_section.md.j2", body=body.rstrip("\n"), title_digest=digest).rstrip("\n") + "\n"


def refreshed(current_title: str, current_body: str, title: str, body: str, *,
              opened_by_person: bool = False) -> tuple[str, str]:
    """Pure: the ``(title, body)`` an open sync PR gets when forksync renders ``title`` and
    ``body`` for it again, given what it holds now. forksync rewrites only its own section
    (:func:`own_section`, found by :func:`own_span`); what a person wrote above or below it stays
    (an agent report, which follows it, too). A title differing from the one forksync last set (its mark in the section)
    is a person's and stays, and the section keeps the old mark so it keeps being theirs. Bodies
    written before sections were marked (they begin with a ``<!-- forksync:`` mark) are forksync's
    whole, as then, but for an agent report; a body with neither (a person replaced the whole
    body) is kept, with forksync's section after it.

    ``opened_by_person``: a person opened the PR (:func:`opened_by_person`), so its title and
    every word outside forksync's section are theirs from the start — no mark can tell which
    title was forksync's, and a title equal to one forksync once set (copied from its closed PR)
    is the person's choice now: the title stays, and a body without a section is never taken
    for forksync's old-style body (forksync's section follows it)."""
    cur = current_body or ""
    span = own_span(cur)
    mark = _TITLE_SET.search(cur[span[0]:span[1]]) if span else None
    theirs = opened_by_person or (mark is not None and title_digest(current_title) != mark.group(1))
    new_title = current_title if theirs else title
    digest = mark.group(1) if theirs and mark is not None else title_digest(title)
    if span:
        return new_title, placed(cur[:span[0]], body, digest, cur[span[1]:])
    if not cur.strip() or (not opened_by_person and cur.lstrip().startswith("<!-- forksync:")):
        report = AGENT_REPORT.search(cur)
        return new_title, placed("", body, digest, "\n" + report.group(0) + "\n" if report else "")
    return new_title, placed(cur.rstrip("\n") + "\n\n", body, digest, "")


def placed(before: str, body: str, digest: str, after: str) -> str:
    """Pure: ``before`` + forksync's section of ``body`` (:func:`own_section`) + ``after``, the
    section's own text cut (:func:`bot.github.limits.fit_body`) where the whole would pass GitHub's
    body limit: a person's text and the section's marks are never what is cut."""
    whole = before + own_section(body, digest) + after
    over = len(whole) - BODY_LIMIT
    if over <= 0:
        return whole
    return before + own_section(fit_body(body, max(len(body) - over, 0)), digest) + after


def _own_text(body: str) -> tuple[tuple[int, int], str, str] | None:
    """``(span, title digest, text)`` of forksync's section in ``body`` when the section is
    forksync's rendering (:func:`own_section`) — the only one whose text may be cut — else None."""
    span = own_span(body)
    mark = _TITLE_SET.search(body[span[0]:span[1]]) if span else None
    if span is None or mark is None:
        return None
    head, _, tail = own_section("\0", mark.group(1)).partition("\0")
    section = body[span[0]:span[1]]
    if not (section.startswith(head) and section.rstrip("\n").endswith(tail.rstrip("\n"))):
        return None
    return span, mark.group(1), section[len(head):len(section.rstrip("\n")) - len(tail.rstrip("\n"))]


def fit_own(body: str) -> str:
    """Pure: a whole PR ``body`` within GitHub's limit (:data:`BODY_LIMIT`) by cutting the text of
    forksync's own section (as :func:`placed` does), so that what follows it — the agent's report
    with its File / Action / Reason table — and what a person wrote are never what is cut. A body
    whose section is not forksync's rendering (a person edited its frame) is cut at its end
    (:func:`bot.github.limits.fit_body`)."""
    if len(body) <= BODY_LIMIT:
        return body
    own = _own_text(body)
    if own is not None:
        (start, end), digest, text = own
        return placed(body[:start], text, digest, body[end:])
    return fit_body(body)


def own_floor(body: str) -> int:
    """Pure: the fewest characters :func:`fit_own` can bring ``body`` to, cutting nothing but the
    text of forksync's own section: ``len(body)`` less that text, plus what :func:`fit_body`
    always leaves of it (``MARGIN``, its cut note and a closed fence). ``len(body)`` when the body
    has no section of forksync's rendering. A body whose floor is within :data:`BODY_LIMIT` leaves
    :func:`fit_own` with no cut at its end."""
    own = _own_text(body)
    if own is None:
        return len(body)
    text = own[2]
    # fit_body's own reserve (bot.github.limits): the margin, the widest cut note, a closing fence
    keep = MARGIN + len(render("body_cut.md.j2", cut=len(text), limit=BODY_LIMIT)) + 8
    return len(body) - len(text) + min(len(text), keep)


#: GitHub's answer (422) to a draft pull request where it has none: a private repository on GitHub
#: Free ("Changing the stage of a pull request", docs.github.com)
NO_DRAFTS = "draft pull requests are not supported"
#: GitHub's answer (422) to a pull request from a head that already has an open one into that base
ALREADY_EXISTS = "a pull request already exists"


async def create_pull(gh, full_name: str, data: dict) -> dict:
    """``POST /pulls`` with ``data`` (``head``: a branch of ``full_name``, ``base``); where GitHub
    refuses a draft because the repository has no draft pull requests, the PR is opened ready
    instead (a chain would otherwise never get one) and says why
    (``templates/github/no_drafts.md.j2``) — the gate holds it all the same. A create whose answer
    GitHub lost (5xx) may have opened the PR: it is looked up (:func:`find_open_pr`) rather than
    sent again, and a 422 "A pull request already exists" answers with the open PR it names.
    Raises what GitHub answers otherwise."""
    rv = split_repo(full_name)

    async def opened() -> dict | None:
        return await find_open_pr(gh, full_name, data["head"], data["base"])

    try:
        return await gh.create("/repos/{owner}/{repo}/pulls", rv, data=data, find=opened)
    except gidgethub.HTTPException as e:
        words = f"{getattr(e, 'message', '') or e} {getattr(e, 'errors', '') or ''}".lower()
        if int(e.status_code) == 422 and ALREADY_EXISTS in words and (pr := await opened()) is not None:
            return pr
        if not data.get("draft") or int(e.status_code) != 422 or NO_DRAFTS not in words:
            raise
    pr = await gh.create("/repos/{owner}/{repo}/pulls", rv, data={**data, "draft": False}, find=opened)
    await comment_once(gh, full_name, pr["number"], "no-drafts", render("no_drafts.md.j2"))
    return pr


async def open_or_update_pr(gh, full_name: str, *, branch: str, base: str, title: str, body: str,
                            labels: list[str], draft: bool = False,
                            bot_login: str | None = None) -> tuple[dict, str]:
    """Open the unit's PR from ``branch`` into ``base`` (as a draft when ``draft``: e.g. a chain
    stopped at a conflict), its body forksync's section (:func:`own_section`), or refresh the open
    one's (into ``base`` too) title and section, keeping what a person wrote or retitled
    (:func:`refreshed`) and an agent report already in it. An open PR a person opened
    (:func:`opened_by_person`, ``bot_login`` forksync's own login) keeps its title and all their
    words; its draft state is never changed here either way. Returns
    ``(pr, "opened"|"updated"|"unchanged")``."""
    rv = split_repo(full_name)
    title = fit_title(title)
    what = ""
    pr = await find_open_pr(gh, full_name, branch, base)
    if pr is None:
        pr = await create_pull(gh, full_name, {"title": title, "head": branch, "base": base,
                                               "body": placed("", body, title_digest(title), ""),
                                               "maintainer_can_modify": True, "draft": draft})
        # a person's PR opened meanwhile (GitHub's 422 "already exists" named it) is refreshed
        # as theirs below, not taken for the one just opened
        what = "" if opened_by_person(pr, bot_login) else "opened"
    if what != "opened":
        pr, what = await refresh_pr(gh, full_name, pr, title=title, body=body, bot_login=bot_login)
    have = {lab.get("name") for lab in pr.get("labels") or []}
    missing = [lab for lab in labels if lab not in have]
    if missing:
        await gh.post("/repos/{owner}/{repo}/issues/{number}/labels", {**rv, "number": pr["number"]},
                      data={"labels": missing})
    return pr, what


async def refresh_pr(gh, full_name: str, pr: dict, *, title: str, body: str,
                     bot_login: str | None = None) -> tuple[dict, str]:
    """Write ``title`` and ``body`` (forksync's section, :func:`own_section`) on the open sync PR
    ``pr`` (as GitHub answered a read of it), keeping what a person wrote or retitled
    (:func:`refreshed`; ``bot_login``: forksync's own login, for :func:`opened_by_person`). No
    request when the PR already says it. Returns ``(pr, "updated"|"unchanged")``, ``pr`` as
    GitHub answered the write. Raises :class:`gidgethub.HTTPException` when GitHub refuses it."""
    now = (pr.get("title") or "", pr.get("body") or "")
    got = refreshed(*now, fit_title(title), body, opened_by_person=opened_by_person(pr, bot_login))
    if got == now:
        return pr, "unchanged"
    return await gh.patch("/repos/{owner}/{repo}/pulls/{number}", {**split_repo(full_name), "number": pr["number"]},
                          data={"title": got[0], "body": got[1]}), "updated"


def verify_resolution(log_text: str, marker_files: list[str], expected_shas: list[str]) -> list[str]:
    """Pure: the problems of a person's resolution on a chain branch (empty = fine).

    ``log_text`` is the messages of the branch's own commits, each ended by a NUL (``git log
    --format=%B%x00``), ``marker_files`` the files where the head adds conflict markers
    (:func:`bot.git.markers.files_with_markers`: the gate's rule, on the real trees),
    ``expected_shas`` the unit's upstream commits. Rules: no conflict markers added, every
    ``Upstream-Commit`` trailer kept, and no commit naming more than one upstream commit (picks
    squashed together land as one fork commit: no longer bisectable or backed out one by one —
    the gate's ``picks-squashed``)."""
    problems = []
    if marker_files:
        problems.append("conflict markers remain in " + ", ".join(f"`{f}`" for f in marker_files))
    kept = set(TRAILER.findall(log_text))
    lost = [s for s in expected_shas if s not in kept]
    if lost:
        problems.append("`Upstream-Commit` trailers missing for " + ", ".join(f"`{s[:12]}`" for s in lost)
                        + " (keep one fork commit per upstream commit, with its trailer)")
    for msg in log_text.split("\0"):
        named = list(dict.fromkeys(TRAILER.findall(msg)))
        if len(named) > 1:
            subject = msg.strip().split("\n", 1)[0][:80]
            problems.append(f"the commit \"{subject}\" names {len(named)} upstream commits ("
                            + ", ".join(f"`{s[:12]}`" for s in named) + "): picks squashed into one commit land "
                            "as one fork commit, no longer bisected or backed out one by one — keep one fork commit "
                            "per upstream commit: reset the branch to the last commit forksync pushed and push "
                            "your changes on top of it")
    return problems


async def on_pushed(ctx, sync, full_name: str, pr: dict, *, fork_ref: str | None = None) -> str:
    """A push to a sync branch: forksync's own push is expected; anyone else's on a chain is a
    resolution to check — folded into its pick when the chain carries a conflict commit
    (:meth:`bot.sync.service.SyncService.finish_conflict`), else verified (once per head sha:
    the reply carries the sha in its marker). Returns what happened: ``own``, ``folded``,
    ``waiting``, ``raced``, ``stale`` (the branch moved past ``head``: the later push's event
    checks it), ``verified``, ``rejected`` or ``""`` (not a sync branch; a PR that is not the
    unit's — only named like one, or a person's from forksync's branch into another base than the
    unit's (:func:`not_forksyncs`; ``fork_ref``: the configuration's ``fork.ref`` for
    :func:`unit_base`, read when needed and not given: :func:`fallback_ref`); or an L2 back-out's
    branch, which carries no unit to resolve)."""
    branch = pr["head"]["ref"]
    head = pr["head"]["sha"]
    row = sync_store.branch_row(ctx.store, full_name, branch)
    if row is None or row.get("kind") == sync_store.BACKOUT:
        return ""
    foreign = row_reason(pr, full_name, row, bot_login=getattr(sync, "bot_login", None),
                         fork_ref=await fallback_ref(ctx, full_name, row, fork_ref))
    if foreign:
        # a push to a fork's branch of the same name, or seen through a person's PR from
        # forksync's branch into another base: neither a resolution of forksync's chain nor
        # anything forksync may fold into it (the unit's own PR, when it has one, brings the push
        # up too)
        ctx.note(f"#{pr.get('number')}: {branch} is not forksync's sync branch ({foreign}); left alone")
        return ""
    if head == row["pushed_tip"]:
        ctx.note(f"{branch}: own push")
        return "own"
    if head and head == row.get("verified_tip"):
        # checked already (verified, or folded: the fold's sync, or the poller's that recorded a
        # fold whose worker died, came first): its event handled again — GitHub's redelivery, a
        # retry of the delivery after the fold — says nothing new; checked again, a folded head
        # would be refused as missing the trailer its fold carries
        ctx.note(f"{branch}: {head[:12]} was checked already")
        return "verified"
    if row["kind"] != "chain":
        ctx.note(f"{branch}: a person pushed to a bundle; it will not be rebuilt")
        return ""
    if pr.get("state", "open") != "open" or pr.get("merged"):
        await comment_once(ctx.gh, full_name, pr["number"], f"resolution-closed:{head}",
                           render("resolution_closed.md.j2", head=head, branch=branch,
                                  state="merged" if pr.get("merged") else pr.get("state")))
        ctx.note(f"{branch}: push to a {pr.get('state')} unit; nothing done")
        return "closed"
    finished = await sync.finish_conflict(ctx, full_name, branch, head, row, pr)
    if finished:
        ctx.note(f"{branch}: {finished}")
        return finished
    problems, kept = await sync.check_resolution(ctx, full_name, branch, head, row["base_sha"],
                                                 json.loads(row["shas_json"]))
    body = render("resolution_check.md.j2", ok=not problems, head=head, problems=problems, kept=kept)
    await comment_once(ctx.gh, full_name, pr["number"], f"resolution:{head}", body)
    if not problems:
        sync_store.save_branch(ctx.store, **{**row, "verified_tip": head})
    ctx.note(f"{branch}: resolution {'verified' if not problems else 'rejected'}")
    return "verified" if not problems else "rejected"
