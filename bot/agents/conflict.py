"""The conflict-resolution agent (orchestration): case → redacted prompt → model → rails → commit.

:func:`resolve_pick` never merges, approves or pushes; its only write is one commit object and
the compare-and-swap of one ``forksync/…`` proposal branch (:func:`bot.agents.conflict_git.publish`),
after every rail passed. The result (:class:`ConflictOutcome`) carries the PR-body section
(``templates/agents/conflict_report.md.j2``) and the flags the GitHub side must honour:
``draft`` (stay draft until L1 passed on ``commit``, see :mod:`bot.agents.policy`) and
``needs_approval``.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from bot.agents.client import AgentClient, AgentSkipped, estimate_tokens, unfinished
from bot.agents.conflict_git import build_commit, publish, verify_commit
from bot.agents.conflict_rails import (
    PERSON_ONLY_PATHS,
    RESOLVE_TOOL,
    TOOL_NAME,
    ConflictCase,
    ConflictFile,
    RailViolation,
    Resolution,
    check_resolution,
    excerpts,
    parse_resolution,
    readings,
    secret_spans_marker,
    split_merged,
    with_blocks_spliced,
)
from bot.agents.output import Cleaner, check_prose
from bot.agents.redact import PLACEHOLDER, Redactor
from bot.agents.render import data_block, new_nonce, render

RAILS = ("output parses", "no conflict markers", "only conflicted files change",
         "non-conflicting hunks unchanged", "prose within limits", "result applies")


@dataclass(frozen=True)
class ConflictOutcome:
    """``status``: ``committed`` (rails passed, ``commit`` on ``branch``), ``rejected`` (a rail
    failed: ``rail``/``detail``), or ``skipped`` (agents off, budget, API failure: ``reason``).
    ``body`` is the rendered PR-body section. The PR stays a draft until L1 passes on ``commit``
    and needs a person's approval in every case."""

    status: str
    upstream_sha: str
    body: str
    commit: str | None = None
    branch: str | None = None
    rail: str | None = None
    detail: str = ""
    reason: str = ""
    model: str = ""
    resolution: Resolution | None = None
    draft: bool = True
    needs_l1: bool = True
    needs_approval: bool = True


def excerpted(case: ConflictCase, over_lines: int) -> frozenset[str]:
    """The files of ``case`` whose merge output has more than ``over_lines`` lines (0: none): they
    are sent as excerpts around their conflict blocks and must be answered per block."""
    if not over_lines:
        return frozenset()
    return frozenset(f.path for f in case.files if f.merged.count("\n") > over_lines)


def build_prompt(case: ConflictCase, redactor: Redactor, nonce: str, *, over_lines: int = 0,
                 context: int = 30) -> tuple[str, str]:
    """(system, user) prompt texts, every piece of repository text redacted and wrapped as data.
    Each file's texts are redacted under the file's path as source (so placeholders can be put
    back into that file only). A file over ``over_lines`` lines (:func:`excerpted`) is sent as
    :func:`~bot.agents.conflict_rails.excerpts` with ``context`` lines around each block, cut
    from the file redacted whole (a cut inside a private key would hide the lines the rules
    recognise it by), and without the fork's whole file."""
    short = excerpted(case, over_lines)

    def file_entry(f) -> dict:
        if f.path in short:
            return {"path": f.path, "excerpts": True,
                    "blocks": sum(seg.is_conflict for seg in split_merged(f.merged, f.path)),
                    "merged_block": data_block(f"merged-excerpts:{f.path}",
                                               excerpts(f.merged, context, lambda t: redactor.redact(t, f.path)), nonce)}
        return {"path": f.path, "excerpts": False,
                "merged_block": data_block(f"merged:{f.path}", redactor.redact(f.merged, f.path), nonce),
                "fork_block": data_block(f"fork:{f.path}", redactor.redact(f.fork or "", f.path), nonce)}
    files = [file_entry(f) for f in case.files]
    user = render("prompts/conflict.md.j2", upstream_sha=case.upstream_sha, paths=list(case.paths), files=files,
                  message_block=data_block("upstream-commit-message",
                                           redactor.redact(case.upstream_message, "commit-message"), nonce))
    system = render("prompts/system.md.j2", nonce=nonce, task="")
    return system, user


@dataclass(frozen=True)
class Proposal:
    """The agent's answer to a case after rails 1–5 (no commit): ``status`` ``proposed`` (with
    ``resolution``), ``rejected`` (``rail``/``detail``) or ``skipped`` (``reason``)."""

    status: str
    resolution: Resolution | None = None
    rail: str = ""
    detail: str = ""
    reason: str = ""
    model: str = ""
    prompt_tokens: int = 0      # estimated, over every request made (0: none was made)
    api_failure: bool = False   # skipped because the API refused the request or could not be reached


async def propose(client: AgentClient, case: ConflictCase, cleaner: Cleaner | None = None,
                  allowed_mentions: tuple[str, ...] = ()) -> Proposal:
    """Ask the model about ``case.files`` (redacted prompt, one ``resolve_conflicts`` call) and run
    the rails that need no repository: output parses, no markers, only the asked files, clean
    regions kept, prose within limits. A file where a secret spans a conflict marker
    (:func:`~bot.agents.conflict_rails.secret_spans_marker`) is never asked about: skipped, a
    person resolves it. Never raises for agent trouble. Used by
    :func:`resolve_pick` and by the resolution benchmark, which scores the answer against the file
    the fork landed."""
    cleaner = cleaner or Cleaner(client.settings, allowed_mentions=allowed_mentions)
    if not client.settings.conflict_resolution:
        return Proposal("skipped", reason="the conflict-resolution agent is off (`agents.conflict_resolution: false`)")
    if case.unsupported:
        return Proposal("skipped", reason=f"not a text conflict an agent may resolve ({case.unsupported})")
    ci = [p for p in case.paths if p.startswith(PERSON_ONLY_PATHS)]
    if ci:
        return Proposal("skipped", reason=f"{', '.join(ci)}: CI and forksync's own configuration are resolved by a "
                                          "person, never by an agent (a pushed branch runs its workflows with the "
                                          "repository's secrets)")
    if not case.files:
        # the rules' commit holds every conflicted file and was not folded (its check refused it):
        # a person decides; a pick here would carry the rules' files past that check
        return Proposal("skipped", reason="forksync's rules decided every conflicted file and their resolution was "
                                          "not folded: nothing for the agent, a person decides")
    hidden = [f.path for f in case.files if secret_spans_marker(f.merged, lambda t, f=f: Redactor().redact(t, f.path))]
    if hidden:
        return Proposal("skipped", reason=f"{', '.join(hidden)}: a secret spans a conflict marker (a private key whose "
                                          "body is in conflict); the model cannot be shown that block without the "
                                          "secret, a person resolves it")
    groups = _request_groups(case, client.settings)
    if len(groups) == 1:
        return await _propose_once(client, case, cleaner, allowed_mentions)
    # too large for one request: one request per group of files, all of them must be answered
    parts: list[Proposal] = []
    for files in groups:
        p = await _propose_once(client, replace(case, files=files, decided=()), cleaner, allowed_mentions)
        if p.status != "proposed":
            names = ", ".join(f.path for f in files)
            return replace(p, detail=p.detail and f"{names}: {p.detail}", reason=p.reason and f"{names}: {p.reason}",
                           prompt_tokens=sum(q.prompt_tokens for q in parts) + p.prompt_tokens)
        parts.append(p)
    res = Resolution(tuple(f for p in parts for f in p.resolution.files),
                     "; ".join(p.resolution.summary for p in parts), parts[-1].model)
    return Proposal("proposed", res, model=parts[-1].model, prompt_tokens=sum(q.prompt_tokens for q in parts))


def _check_placeholders(res: Resolution, case: ConflictCase) -> None:
    """A redaction placeholder left in a resolved file after restoring (one taken from another
    file or from the commit message) would be committed as literal text in place of the value it
    hides: the answer is rejected instead ("output parses"), unless the file itself held that
    text before the pick."""
    by_path = {f.path: f for f in case.files}
    for f in res.files:
        left = {m.group(0) for m in PLACEHOLDER.finditer(f.content or "")}
        c = by_path.get(f.path)
        known = {m.group(0) for m in PLACEHOLDER.finditer((c.merged if c else "") + ((c.fork or "") if c else ""))}
        extra = sorted(left - known)
        if extra:
            raise RailViolation("output parses", f"{f.path} holds redaction placeholder(s) {', '.join(extra)} that stand "
                                "for text of another file or of the commit message; they would be committed as they are")


def prompt_tokens(case: ConflictCase, settings) -> int:
    """The estimated prompt size of ``case`` in tokens (:func:`bot.agents.client.estimate_tokens`),
    with the excerpts ``settings`` (:class:`~bot.config.agents.AgentSettings`) ask for."""
    system, user = build_prompt(case, Redactor(), "0" * 16, over_lines=settings.excerpt_over_lines,
                                context=settings.excerpt_context_lines)
    return estimate_tokens(system, [{"role": "user", "content": user}])


def _request_groups(case: ConflictCase, settings) -> list[tuple[ConflictFile, ...]]:
    """The case's files in one group when its prompt fits ``max_prompt_tokens``, else packed in
    order into as few groups as fit (a file too large alone is its own group: that request is
    skipped with the reason, as one large request would be)."""
    limit = settings.max_prompt_tokens
    if len(case.files) < 2 or prompt_tokens(case, settings) <= limit:
        return [case.files]
    groups: list[tuple[ConflictFile, ...]] = []
    current: tuple[ConflictFile, ...] = ()
    for f in case.files:
        trial = current + (f,)
        if current and prompt_tokens(replace(case, files=trial), settings) > limit:
            groups.append(current)
            trial = (f,)
        current = trial
    groups.append(current)
    return groups


async def _propose_once(client: AgentClient, case: ConflictCase, cleaner: Cleaner,
                        allowed_mentions: tuple[str, ...]) -> Proposal:
    redactor = Redactor()
    st = client.settings
    system, user = build_prompt(case, redactor, new_nonce(), over_lines=st.excerpt_over_lines,
                                context=st.excerpt_context_lines)
    short = excerpted(case, st.excerpt_over_lines)
    size = estimate_tokens(system, [{"role": "user", "content": user}])
    try:
        reply = await client.call("conflict-resolution", system=system,
                                  messages=[{"role": "user", "content": user}],
                                  tools=[RESOLVE_TOOL], tool_choice={"type": "tool", "name": TOOL_NAME},
                                  redactor=redactor)
    except AgentSkipped as e:
        return Proposal("skipped", reason=e.reason, api_failure=e.api_failure,
                        prompt_tokens=size if e.api_failure else 0)
    try:
        if (cut := unfinished(reply)) is not None:
            raise RailViolation("output parses", cut)
        parsed = parse_resolution(reply.tool_uses, reply.model)
        whole = sorted(f.path for f in parsed.files if f.path in short and f.blocks is None)
        if whole:
            raise RailViolation("output parses", f"{', '.join(whole)} was shown as excerpts around its conflict "
                                "blocks: it must be answered with `blocks`, not a whole file")
        # Placeholders go back only into the file they were taken from (never into another file);
        # a file answered per block is spliced into the (unredacted) merge output
        res = with_blocks_spliced(Resolution(tuple(
            replace(f, content=None if f.content is None else redactor.restore(f.content, f.path),
                    blocks=None if f.blocks is None else tuple(redactor.restore(b, f.path) for b in f.blocks))
            for f in parsed.files), parsed.summary, parsed.model), case)
        _check_placeholders(res, case)
        check_resolution(res, case)
        check_prose(client.settings, [res.summary] + [t for f in res.files for t in (f.path, f.action, f.reason)]
                    + [reply.text], allowed_mentions)
    except RailViolation as v:
        return Proposal("rejected", rail=v.rail, detail=v.detail, model=reply.model, prompt_tokens=size)
    return Proposal("proposed", res, model=reply.model, prompt_tokens=size)


async def resolve_pick(client: AgentClient, case: ConflictCase, repo_path: str, branch: str,
                       *, branch_old: str | None = None, replaces: str | None = None,
                       allowed_mentions: tuple[str, ...] = ()) -> ConflictOutcome:
    """Ask the agent to resolve ``case``; on success commit onto ``case.fork_tip`` and move
    ``branch`` (which must currently be at ``branch_old``; None: must not exist yet).
    ``replaces``: the chain's conflict commit (forksync's own, child of ``case.fork_tip``) that the
    resolved pick takes the place of; the branch may then be at it instead of at the fork tip.

    Never raises for agent trouble (that is a ``skipped``/``rejected`` outcome); raises ValueError
    when ``branch`` moved meanwhile or is not a ``forksync/`` branch.
    """
    if branch_old is not None and branch_old not in (case.fork_tip, replaces):
        raise ValueError(f"{branch} is at {branch_old[:12]}, but the pick goes onto {case.fork_tip[:12]}: "
                         "the proposal branch must be at the commit the pick is replayed onto")
    cleaner = Cleaner(client.settings, allowed_mentions=allowed_mentions)

    merged = {f.path: f.merged for f in case.files}

    def outcome(status: str, **kw) -> ConflictOutcome:
        res: Resolution | None = kw.get("resolution")
        for k in ("detail", "reason", "model"):       # the outcome's own fields are sanitised too
            if kw.get(k):
                kw[k] = cleaner.text(kw[k], 80 if k == "model" else 500)
        data = dict(status=status, upstream_sha=case.upstream_sha, paths=list(case.all_paths),
                    asked=list(case.paths),
                    by_rules=[{"path": f.path, "action": f.action, "reason": f.reason, "rule": f.rule} for f in case.decided],
                    model=kw.get("model", ""), commit=kw.get("commit") or "",
                    rail=kw.get("rail") or "", detail=kw.get("detail", ""),
                    reason=kw.get("reason", ""), rails=list(RAILS),
                    summary=cleaner.text(res.summary, 300) if res else "",
                    files=[{"path": cleaner.text(f.path, 200), "action": cleaner.text(f.action, 200),
                            "reason": cleaner.text(f.reason, 600)} for f in (res.files if res else ())],
                    # forksync's own reading of each block, computed from the answer: the File /
                    # Action / Reason above is the agent's word, which nothing else checks
                    readings=[{"path": f.path, "text": r} for f in (res.files if res else ())
                              if (r := readings(merged.get(f.path, ""), f.content or ""))])
        body = render("conflict_report.md.j2", sanitized_notes=cleaner.notes, **data)
        return ConflictOutcome(status=status, upstream_sha=case.upstream_sha, body=body, branch=branch,
                               **{k: v for k, v in kw.items() if k in {"commit", "rail", "detail", "reason",
                                                                        "model", "resolution"}})

    p = await propose(client, case, cleaner, allowed_mentions)
    if p.status != "proposed":
        return outcome(p.status, rail=p.rail, detail=p.detail, reason=p.reason, model=p.model)
    res = p.resolution
    try:
        commit = build_commit(repo_path, case, res)
        verify_commit(repo_path, commit, case)
    except RailViolation as v:
        return outcome("rejected", rail=v.rail, detail=v.detail, model=p.model)
    publish(repo_path, branch, commit, branch_old)
    return outcome("committed", commit=commit, model=p.model, resolution=res)
