"""``/forksync <verb>`` in issue and PR comments: permission check, ack, run once, reply.

Flow for each command in a created or edited comment (of the conversation, or on a line of the
diff), or in the body of a submitted or edited review (parser: :mod:`bot.core.commands`), on a
repository forksync syncs (elsewhere each answers "not run"; ``help`` anywhere):

1. Already run for this comment (table ``command_runs``, :mod:`bot.commands.store`; key comment id + canonical line)? Skip:
   editing a comment runs only the commands it did not hold before (``changes.body.from``: the
   lines it held are its earlier text's, run by that text's own delivery, which GitHub may
   deliver after the edit's).
2. Permission: the commenter's collaborator permission must be write, maintain or admin
   (``repos/get-collaborator-permission-level``); ``signoff`` instead needs the commenter to be
   an owner of the area (``areas[].owners`` in the fork's config). Refused → a reply saying why.
   The lookup itself failing (GitHub 5xx, network) fails closed: nothing runs, the commenter gets
   one reply saying it will be retried and a 😕 reaction, and the error goes back to the worker,
   which retries the delivery with backoff (the command then runs and gets its usual reply).
3. Ack with a 👀 reaction, run the effect (:func:`run_command`: the sync service's verbs and the
   gate's), answer with one comment. The verbs about one PR (:data:`PR_VERBS`) on a PR into
   another base than the branch forksync syncs (``fork.ref``) answer why they do nothing
   (:func:`bot.sync.prs.off_base`).
   Replies carry a hidden marker per (comment, command), so a redelivery never doubles them.

Unknown or malformed commands get a reply listing the verbs (``command_help.md.j2``).

A sign-off is taken back with its line: an edit that removes ``/forksync signoff <x>`` from the
comment, or the comment's deletion (``issue_comment.deleted``), withdraws the sign-off recorded
from it and says so in a reply. Any command so taken back before it ran never runs, however late
its own delivery comes (out of order, retried or redelivered), and neither does one whose comment
is gone when it is acknowledged (GitHub answers the 👀 404). A line an edit types again after
another took it away is a new command: it runs once (texts are ordered by :func:`comment_order`,
kept with each result as ``written``).

This package sits above both services: its verbs reach the sync service (hold, plan, decide,
pick) and the merge gate (merge, sign-off, L3, retest).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime

import gidgethub
from pydantic import BaseModel, ConfigDict

from bot.commands import store as commands_store
from bot.config.forksync import ForksyncConfig
from bot.core import commands as cm
from bot.core.logins import among, same_login
from bot.github.common import (
    WRITE_LEVELS,
    Account,
    Numbered,
    RepoRef,
    ReviewRef,
    comment_once,
    from_payload,
    is_permanent,
    permission,
    react,
    render,
    split_repo,
)
from bot.github.fork_config import CONFIG_PATH, fetch_config_text, load_fork_config
from bot.sync import prs as sync_prs
from bot.sync import store as sync_store
from bot.sync.status import SyncStatus
from bot.templating import code_span
from bot.validation import signoff
from bot.validation.service import after_hold, after_l3_queued, after_signoff, command_merge, command_retest, l3_head_refusal


class _Comment(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: int
    body: str | None = ""
    # null for a deleted account (GitHub's "ghost"), as GitHub's schema allows
    user: Account | None = None
    html_url: str = ""
    created_at: str = ""
    updated_at: str = ""


class _Issue(BaseModel):
    model_config = ConfigDict(extra="allow")
    number: int
    pull_request: dict | None = None


#: Verbs about one PR that reach the gate, L3 runs or the conflict agent: on a PR into another
#: base than the branch forksync syncs (``fork.ref``) they are refused (:func:`bot.sync.prs.off_base`).
PR_VERBS = (cm.Merge, cm.Retest, cm.L3, cm.Signoff, cm.Resolve)


def run_key(repo: str, comment_id: int | str, line: str) -> str:
    return f"{repo}#{comment_id}:" + hashlib.sha1(line.encode()).hexdigest()[:16]


def comment_order(comment) -> str:
    """Pure: a key that sorts commands in the order they were written — the comment's last edit,
    else its creation (an edit runs only the commands it added: :func:`written_at`), then the id
    GitHub gives in increasing order — so deliveries arriving out of order can be told apart."""
    return f"{comment.updated_at or comment.created_at}#{int(comment.id):020d}"


def written_at(comment) -> int:
    """Pure: when the commenter wrote the comment's text (epoch s; 0 when GitHub gave no time): its
    last edit, else its creation. An edit runs only the commands it added, so that is when they
    were written."""
    stamp = comment.updated_at or comment.created_at
    return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()) if stamp else 0


def help_rows() -> list[dict]:
    return [{"usage": cm.usage(v), "help": h} for v, (_a, h) in cm.VERBS.items()]


@dataclass(frozen=True)
class _Source:
    """Where commands were written: a conversation comment (``key_id`` its id), or the body of a
    submitted review (``key_id`` ``review-<id>``; GitHub has no reactions on reviews, so there the
    reply alone acknowledges)."""

    repo: RepoRef
    number: int
    is_pr: bool
    comment: _Comment
    key_id: str
    reactions: bool = True

    @property
    def full(self) -> str:
        return self.repo.full_name


async def _react(ctx, src: _Source, content: str) -> bool:
    """React to ``src``'s comment; False when GitHub answers 404: the comment was deleted (its
    delivery came, or came again, after the deletion)."""
    if src.reactions:
        try:
            await react(ctx.gh, src.full, src.comment.id, content)
        except gidgethub.HTTPException as e:
            if int(e.status_code) != 404:
                raise
            return False
    return True


async def _serves(ctx, full: str) -> bool:
    """Whether forksync syncs ``full``: a fork it adopted, or a repository with a
    ``.github/forksync.yml`` on its default branch. An installation on all of an organisation's
    repositories delivers their comments too."""
    if any(r["fork"] == full for r in sync_store.tracked_forks(ctx.store)):
        return True
    text, _sha = await fetch_config_text(ctx.gh, full)
    return text is not None


def previous_body(data: dict) -> str | None:
    """Pure: the body an ``edited`` payload's comment had before the edit (``changes.body.from``),
    None when the payload does not say (not an edit, or one that left the body as it was)."""
    if data.get("action") != "edited":
        return None
    before = ((data.get("changes") or {}).get("body") or {}).get("from")
    return before if isinstance(before, str) else None


async def on_comment(ctx, data: dict) -> None:
    """Run the ``/forksync`` commands of an ``issue_comment`` payload ``data`` (created or edited);
    for an edit, take back the commands whose lines it removed; for ``deleted``, those the comment held."""
    comment = from_payload(_Comment, data, "comment")
    issue = from_payload(_Issue, data, "issue")
    repo = from_payload(RepoRef, data, "repository")
    await _on_text(ctx, data, _Source(repo, issue.number, issue.pull_request is not None, comment, str(comment.id)))


async def on_review(ctx, data: dict) -> None:
    """Run the ``/forksync`` commands in the body of a submitted ``pull_request_review`` payload
    ``data`` — where reviewers naturally write a sign-off — under the rules of a comment's
    (permission, run once, one reply each); an ``edited`` review is read as an edited comment, a
    ``dismissed`` one as a deleted comment."""
    review = from_payload(ReviewRef, data, "review")
    comment = _Comment(id=review.id, body=review.body or "", user=review.user, html_url=review.html_url or "",
                       created_at=review.submitted_at or "")
    repo = from_payload(RepoRef, data, "repository")
    src = _Source(repo, from_payload(Numbered, data, "pull_request").number, True, comment, f"review-{comment.id}", reactions=False)
    await _on_text(ctx, data, src)


async def on_review_comment(ctx, data: dict) -> None:
    """Run the ``/forksync`` commands of a ``pull_request_review_comment`` payload ``data`` (a
    comment on a line of the diff; created, edited or deleted) under the rules of a conversation
    comment's; the replies go to the PR's conversation (no 👀: the reply acknowledges)."""
    comment = from_payload(_Comment, data, "comment")
    repo = from_payload(RepoRef, data, "repository")
    src = _Source(repo, from_payload(Numbered, data, "pull_request").number, True, comment, f"review-comment-{comment.id}",
                  reactions=False)
    await _on_text(ctx, data, src)


async def _on_text(ctx, data: dict, src: _Source) -> None:
    """The commands of ``src`` for the event ``data`` (its ``action`` and ``sender``): ``deleted``
    (a review: ``dismissed``) withdraws what the text held; ``edited`` withdraws the lines it
    removed and runs those it added; otherwise every command runs."""
    comment = src.comment
    if comment.user is None:
        # a deleted account (the ghost): no one whose permission could be checked, nothing to reply to
        ctx.note("written by a deleted account: no command read")
        return
    sender = str((data.get("sender") or {}).get("login") or "")
    if data.get("action") == "deleted":
        await _withdraw(ctx, src, cm.parse_comment(comment.body), "its comment was deleted", commands_store.LATEST)
        return
    if data.get("action") == "dismissed":
        # a submitted review cannot be deleted: dismissing it is how GitHub takes it back, and
        # it then stops counting as an approval; a sign-off in its body is taken back with it
        await _withdraw(ctx, src, cm.parse_comment(comment.body), f"@{sender or '?'} dismissed the review",
                        commands_store.LATEST)
        return
    parsed = cm.parse_comment(comment.body)
    before = previous_body(data)
    if before is not None:
        earlier = cm.parse_comment(before)
        now_held = {c.line for c in parsed}
        await _withdraw(ctx, src, [c for c in earlier if c.line not in now_held],
                        f"@{sender or comment.user.login} removed its line from the comment", comment_order(comment))
        # an edit runs only the commands it added: the ones the comment held before are the earlier
        # text's, run (or refused) by that text's own delivery however late it arrives — never
        # refused as the editor's, nor recorded as run before their author's delivery comes
        held = {c.line for c in earlier}
        parsed = [c for c in parsed if c.line not in held]
    # GitHub lets any writer edit anyone's comment, and its edited event's sender is the editor: a
    # command run as the comment's author must be what the author wrote, never an edit by another
    await _run_commands(ctx, src, parsed, editor=sender if data.get("action") == "edited" else "")


async def _withdraw(ctx, src: _Source, cmds, why: str, at: str) -> None:
    """Take back the commands among ``cmds`` (lines gone from ``src``: ``why``) by the text
    written ``at`` (:func:`comment_order`; :data:`bot.commands.store.LATEST` for a deletion). One
    not run yet never runs: GitHub delivers out of order, and a delivery may be retried or
    redelivered long after its text was edited or deleted — unless a later edit types it again,
    which runs it once. Only a sign-off stands on as a record the gate counts (withdrawn, with a
    reply when one was recorded); the other verbs' effects are done."""
    user = src.comment.user.login
    for cmd in cmds:
        key = run_key(src.full, src.key_id, cmd.line)
        run = commands_store.run_of(ctx.store, key)
        prior = None if run is None else run[0]
        if run is not None and run[1] > at:
            continue            # typed again after this removal (its delivery came first): it stands
        if prior is not None and prior != "ran":
            continue            # refused, malformed or withdrawn already: nothing stands
        if not isinstance(cmd, cm.Signoff) or not src.is_pr:
            if prior is None:
                commands_store.record(ctx.store, key, src.full, src.comment.id, cmd.line, user,
                                      "withdrawn: " + why, ctx.now(), at)
                ctx.note(f"{cmd.line}: withdrawn before it ran ({why})")
            continue
        commands_store.record(ctx.store, key, src.full, src.comment.id, cmd.line, user, "withdrawn: " + why, ctx.now(),
                              at)
        gone = signoff.withdraw_signoff(ctx.store, src.full, src.number, cmd.subject, user, src.comment.html_url)
        ctx.note(f"{cmd.line}: withdrawn ({why})" + ("" if gone else ", none was recorded"))
        if not gone:
            continue
        body = render("command_reply.md.j2", user=user, line=cmd.line,
                      result=f"sign-off of `{cmd.subject}` withdrawn: {why}, so it no longer counts. To sign off "
                             f"again, write `{cmd.line}` in a new comment.",
                      details=await after_signoff(ctx, src.full, src.number))
        await comment_once(ctx.gh, src.full, src.number, f"reply:{src.key_id}:{key.rsplit(':', 1)[1]}:withdrawn", body)


async def _run_commands(ctx, src: _Source, parsed, *, editor: str) -> None:
    """Run each of ``parsed`` (commands of ``src``) once, as the comment's author; ``editor``: who
    made the edit being delivered ("" for a creation), whose additions to another person's comment
    are refused."""
    comment, repo = src.comment, src.repo
    user = comment.user.login
    written = comment_order(comment)
    cfg = None
    served: bool | None = None
    retry: BaseException | None = None
    for cmd in parsed:
        key = run_key(src.full, src.key_id, cmd.line)
        mark = f"reply:{src.key_id}:{key.rsplit(':', 1)[1]}"
        prior = commands_store.run_of(ctx.store, key)
        if prior is not None:
            result, at = prior
            # only a line typed again after an edit took it away runs again, once: a late or
            # repeated delivery of a text written before that removal, or of one already
            # answered, runs nothing
            if not (result.startswith("withdrawn") and at < written):
                pending = commands_store.pending_reply(ctx.store, key)
                if pending is None:
                    ctx.note(f"{cmd.line}: already ran")
                    continue
                # it ran and GitHub failed its reply: post that reply now, never run it again
                try:
                    await comment_once(ctx.gh, src.full, src.number, *pending)
                except Exception as e:  # noqa: BLE001 - the others go on; the delivery's retry posts it
                    retry = retry or e
                    continue
                commands_store.reply_posted(ctx.store, key)
                ctx.note(f"{cmd.line}: already ran, its reply posted now")
                continue
            mark += f":{written_at(comment)}"       # its own reply, beside any the earlier line got
        if isinstance(cmd, cm.CommandError):
            body = render("command_help.md.j2", marker="", user=user, line=cmd.line, message=cmd.message,
                          verbs=help_rows())
            await comment_once(ctx.gh, src.full, src.number, mark, body)
            await _react(ctx, src, "confused")
            commands_store.record(ctx.store, key, src.full, comment.id, cmd.line, user, "malformed", ctx.now(), written)
            ctx.note(f"{cmd.line}: malformed")
            continue
        if isinstance(cmd, cm.Help):         # anyone may ask; nothing changes
            body = render("command_help.md.j2", marker="", user=user, line=cmd.line, message="", verbs=help_rows())
            await comment_once(ctx.gh, src.full, src.number, mark, body)
            commands_store.record(ctx.store, key, src.full, comment.id, cmd.line, user, "ran", ctx.now(), written)
            ctx.note(f"{cmd.line}: ran")
            continue
        if served is None:
            served = await _serves(ctx, src.full)
        if not served:
            body = render("command_reply.md.j2", user=user, line=cmd.line,
                          result=f"not run: {src.full} is not a repository forksync syncs (no `{CONFIG_PATH}` on "
                                 "its default branch); nothing was changed.", details="")
            await comment_once(ctx.gh, src.full, src.number, mark, body)
            commands_store.record(ctx.store, key, src.full, comment.id, cmd.line, user, "refused: not served", ctx.now(), written)
            ctx.note(f"{cmd.line}: not run ({src.full} is not served)")
            continue
        who, why = user, ""
        if editor and not same_login(editor, user):
            who, why = editor, f"edited by @{editor}, not its author"
            refusal, owners = (f"@{editor} edited this comment of @{user}'s; a command runs as its comment's author, "
                               f"so one written into another person's comment is not run — @{editor}, write it in a "
                               "comment of your own"), []
        else:
            if cfg is None:
                cfg = await load_fork_config(ctx, src.full)
            try:
                refusal, owners = await _refusal(ctx, src.full, user, cmd, cfg)
            except Exception as e:  # noqa: BLE001 - fail closed, tell the commenter, re-raise for the worker's retry
                await _tell_lookup_failed(ctx, src, mark, user, cmd.line, e)
                raise
        if refusal:
            body = render("command_denied.md.j2", marker="", user=who, line=cmd.line, reason=refusal, owners=owners)
            await comment_once(ctx.gh, src.full, src.number, mark, body)
            await _react(ctx, src, "-1")
            commands_store.record(ctx.store, key, src.full, comment.id, cmd.line, who, "refused: " + refusal, ctx.now(), written)
            ctx.note(f"{cmd.line}: refused ({why or refusal})")
            continue
        if not await _react(ctx, src, "eyes"):
            commands_store.record(ctx.store, key, src.full, comment.id, cmd.line, user,
                                  "withdrawn: its comment was deleted before it ran", ctx.now(), written)
            ctx.note(f"{cmd.line}: not run (its comment was deleted)")
            continue
        try:
            reply = await run_command(ctx, cmd, repo=repo, number=src.number, is_pr=src.is_pr,
                                      user=user, cfg=cfg, comment_url=comment.html_url, order=comment_order(comment),
                                      written=written_at(comment))
        except Exception as e:  # noqa: BLE001 - one command's failure must not cost the others their run
            # a retryable one is left unrecorded, so the delivery's retry runs it (and only it: the
            # others are recorded as ran); one GitHub will refuse again is answered and recorded
            if await _tell_command_failed(ctx, src, mark, key, cmd.line, e, written):
                retry = retry or e
            continue
        # recorded as ran before its reply: its effects are done, so a reply GitHub fails is posted
        # by the delivery's retry (pending_reply) and the command is never run a second time
        commands_store.record(ctx.store, key, src.full, comment.id, cmd.line, user, "ran", ctx.now(), written,
                              reply=(mark, reply))
        ctx.note(f"{cmd.line}: ran")
        try:
            await comment_once(ctx.gh, src.full, src.number, mark, reply)
        except Exception as e:  # noqa: BLE001 - the later lines still run; the retry posts this reply
            retry = retry or e
            continue
        commands_store.reply_posted(ctx.store, key)
    if retry is not None:
        raise retry


def _problem(e: BaseException) -> str:
    """What went wrong, in words that carry no secret: GitHub's status, else the error's type."""
    status = getattr(e, "status_code", None)
    return f"GitHub answered {int(status)}" if status is not None else f"{type(e).__name__}"


async def _tell_command_failed(ctx, src: _Source, mark: str, key: str, line: str, e: BaseException,
                               written: str) -> bool:
    """``line`` failed with ``e`` while it ran: say so once and react 😕. Returns whether the
    delivery is to be retried for it (:func:`lookup_retried`); one that is not is recorded as
    failed, so no redelivery runs it again. Best effort: when GitHub cannot take the reply either,
    the retry is what matters."""
    retrying = lookup_retried(e)
    problem = _problem(e)
    user = src.comment.user.login
    body = render("command_failed.md.j2", user=user, line=line, problem=problem, retrying=retrying)
    try:
        await comment_once(ctx.gh, src.full, src.number, mark + (":failed" if retrying else ""), body)
        await _react(ctx, src, "confused")
    except Exception as reply_error:  # noqa: BLE001 - the command's own error decides the retry
        ctx.note(f"{line}: could not tell the commenter it failed: {type(reply_error).__name__}")
        retrying = True
    if not retrying:
        commands_store.record(ctx.store, key, src.full, src.comment.id, line, user, "failed: " + problem, ctx.now(),
                              written)
    ctx.note(f"{line}: failed ({problem})" + ("; the delivery is retried" if retrying else ""))
    return retrying


def lookup_retried(e: BaseException) -> bool:
    """Whether the worker retries a delivery that failed with ``e``: the dispatcher's rule
    (:func:`bot.github.common.is_permanent`), so a command is never promised a retry the
    dispatcher dead-letters at once (a GitHub 4xx other than 401/403/409/429, or an error reading
    a payload)."""
    return not is_permanent(e)


async def _tell_lookup_failed(ctx, src: _Source, mark: str, user: str, line: str, e: BaseException) -> None:
    """The permission lookup failed, so the command did not run (fail closed): say so once (its
    own marker, so the real reply still comes after a successful retry) and react 😕. Best
    effort: when GitHub cannot take the reply either, the retry is what matters."""
    problem = _problem(e)
    body = render("command_permission_unknown.md.j2", user=user, line=line, problem=problem,
                  retrying=lookup_retried(e))
    try:
        await comment_once(ctx.gh, src.full, src.number, mark + ":permission-unknown", body)
        await _react(ctx, src, "confused")
    except Exception as reply_error:  # noqa: BLE001 - the original error is re-raised by the caller
        ctx.note(f"{line}: could not tell the commenter the permission lookup failed: {type(reply_error).__name__}")
    ctx.note(f"{line}: permission lookup failed ({problem}); not run")


async def _refusal(ctx, full_name: str, user: str, cmd, cfg) -> tuple[str, list[str]]:
    """Why ``user`` may not run ``cmd`` ("" when allowed) and who may. An area's owner is the
    account in any case (:func:`bot.core.logins.among`): forksync.yml may spell it otherwise than
    GitHub gives the commenter."""
    level = await permission(ctx.gh, full_name, user)
    if isinstance(cmd, cm.Signoff):
        by_name = {a.name: a for a in cfg.areas}
        if cmd.subject in by_name:
            owners = list(by_name[cmd.subject].owners)
            if among(user, owners):
                return "", owners
            return f"only owners of area `{cmd.subject}` may sign it off", owners
        owners = sorted({o for a in cfg.areas for o in a.owners})
        if among(user, owners) or level == "admin":
            return "", owners
        return f"`{cmd.subject}` is a metric; only area owners may sign off metrics", owners
    if level in WRITE_LEVELS:
        return "", []
    return f"@{user} has `{level}` permission; `{cmd.verb}` needs write or admin", []


async def run_command(ctx, cmd: cm.Command, *, repo, number: int, is_pr: bool, user: str, cfg: ForksyncConfig,
                      comment_url: str = "", order: str = "", written: int = 0) -> str:
    """Run one permitted command; returns the reply comment body (``command_reply.md.j2``).
    ``order``: the comment's :func:`comment_order` ("" = now); a ``hold``/``unhold`` older than the
    one in force is not applied (GitHub does not deliver in order: the later comment wins).
    ``written``: when the commenter wrote the command (:func:`written_at`; 0 = now), the time a
    sign-off is recorded at, and what a retest's or an l3's authorisation of the head is checked against."""
    svc = ctx.sync
    full = repo.full_name

    def reply(result: str, details: str = "") -> str:
        return render("command_reply.md.j2", user=user, line=cmd.line, result=result, details=details)

    if isinstance(cmd, cm.Hold):
        if not sync_store.set_hold(ctx.store, full, cmd.on, order):
            st = sync_store.load_status(ctx.store, full) or SyncStatus(repo=full)
            return reply("not applied: a later comment already set the fork "
                         + ("on hold." if st.held else "off hold.") + " The latest `hold` or `unhold` wins.")
        if svc:
            await svc.refresh_status_issue(ctx, full, cfg=cfg)
        notes = await after_hold(ctx, full, cfg.github.branch_prefix)
        return reply("on hold: no sync PRs are opened or merged until `/forksync unhold`." if cmd.on
                     else "hold lifted; the next sync runs as usual.", "; ".join(notes))
    if isinstance(cmd, cm.Merge) and not is_pr:
        return reply("`merge` works on a sync PR, not on an issue.")
    if isinstance(cmd, (cm.L3, cm.Signoff, cm.Retest)) and not is_pr:
        return reply(f"`{cmd.verb}` works on a sync PR, not on an issue.")
    pr: dict = {}
    if isinstance(cmd, PR_VERBS) and is_pr:
        pr = await ctx.gh.getitem("/repos/{owner}/{repo}/pulls/{number}", {**split_repo(full), "number": number})
        off = sync_prs.off_base(pr, cfg.fork.ref)
        if off:
            # the gate's own rule, said before anything is queued, recorded or asked of an agent:
            # a PR from forksync's branch into another base shares the unit's head and branch
            return reply(f"not run: this PR is {off}. forksync runs, updates, signs off and merges only PRs "
                         "into that branch; a PR into another base is merged by a person.")
        if pr.get("state") != "open" and not isinstance(cmd, cm.Signoff):
            # nothing would run, be queued or merged for it: say so, never "queued"
            return reply(f"not run: this PR is {'merged' if pr.get('merged') else 'closed'}.")
    if isinstance(cmd, cm.Merge):
        return reply(*await command_merge(ctx, full, number))
    if isinstance(cmd, cm.Signoff):
        prefix = cfg.github.labels.area_prefix
        areas = tuple(lab["name"][len(prefix):] for lab in pr.get("labels") or []
                      if prefix and lab.get("name", "").startswith(prefix))
        try:
            # no L3 run flags metrics yet (PRState.metrics_needing_signoff is not fed), so only areas
            owners = signoff.signoff_owners(cmd.subject, cfg.areas, areas, metrics=())
            # dated when the owner wrote it, not when forksync read it: a delivery that arrives
            # late (out of order, or retried) must not cover commits pushed after the owner looked
            when = min(written, int(ctx.now())) if written else int(ctx.now())
            signoff.record_signoff(ctx.store, full, number, pr["head"]["sha"], cmd.subject, user, owners,
                                   when, comment_url)
        except signoff.SignoffError as e:
            return reply(f"not recorded: {e}")
        return reply(f"sign-off of `{cmd.subject}` recorded on `{pr['head']['sha'][:12]}`.",
                     await after_signoff(ctx, full, number))
    if isinstance(cmd, cm.L3):
        suites = cfg.suites
        if ctx.validation:
            # the suites l3_tick will run are the trusted ones: a broken file on the default branch is
            # said now, naming the file, line and key, not after the run was queued on a stale copy
            tr = await ctx.validation.trusted(ctx, full)
            if tr.error:
                return reply("not queued: the trusted `.github/forksync.yml` on the default branch is invalid, so "
                             "its L3 suites are unknown; fix it there, then ask again.", f"```\n{tr.error}\n```")
            suites = tr.suites
            # GitHub does not deliver in order: a push read before this comment is not what the writer saw
            unseen = await l3_head_refusal(ctx, full, pr, written)
            if unseen:
                return reply(f"not queued: {unseen} with `{cmd.line}`.")
        try:
            asked = signoff.request_l3(ctx.store, full, number, pr["head"]["sha"], cmd.workload, suites, user,
                                       int(ctx.now()))
        except signoff.SignoffError as e:
            return reply(f"not queued: {e}")
        if not asked.new:
            # the run asked for is the one already waiting: saying "queued" would promise a second
            return reply(f"L3 `{cmd.workload}` is already queued on `{pr['head']['sha'][:12]}` "
                         f"({len(asked.runs)} run(s) waiting or running); nothing more queued.")
        return reply(f"L3 `{cmd.workload}` queued ({len(asked.new)} run(s)) on `{pr['head']['sha'][:12]}`.",
                     await after_l3_queued(ctx, full, number))
    if isinstance(cmd, cm.Retest):
        if svc:
            return reply(await command_retest(ctx, full, number, cmd.suite, user, written=written))
        return reply("retest requested" + (f" for suite `{cmd.suite}`" if cmd.suite else " for all suites")
                     + "; results arrive as check runs on this PR.")
    if not svc:
        return reply("not available: this bot runs without a sync service.")
    if isinstance(cmd, cm.Plan):
        return await svc.plan_preview(ctx, full, user=user, cfg=cfg, line=cmd.line)
    if isinstance(cmd, (cm.Decide, cm.Reconsider)):
        shas = await svc.resolve_target(ctx, full, cmd.target, cfg)
        if not shas:
            return reply(f"`{cmd.target}` is not an upstream commit or PR I know of; nothing recorded.")
        disp = cmd.disposition if isinstance(cmd, cm.Decide) else None
        reason = cmd.reason if isinstance(cmd, cm.Decide) else f"reconsidered by @{user}"
        await svc.record_decisions(ctx, full, shas, disp, reason, user)
        await svc.sync(ctx, full, reason=cmd.line, cfg=cfg)
        return reply(f"recorded for {', '.join(f'`{s[:12]}`' for s in shas)}"
                     + (f": {disp.value} — {code_span(reason)}" if disp else ": decision lifted, back to PENDING") + ".")
    if isinstance(cmd, cm.Pick):
        return reply(await svc.urgent_pick(ctx, full, cmd.target, cfg, user))
    if isinstance(cmd, cm.Resolve):
        if not is_pr:
            return reply("`resolve` works on a chain PR stopped at a conflict, not on an issue.")
        return reply(await svc.agent_resolve(ctx, full, number, cfg))
    return reply("not supported here.")  # pragma: no cover
