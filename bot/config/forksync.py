"""forksync configuration: ``forksync.yml`` (in GitHub mode ``.github/forksync.yml`` on the fork's
default branch), validated with pydantic v2.

One model serves every feature: the core reads ``upstream``/``fork``/``provenance``/``areas``;
the GitHub app reads ``github``; validation reads ``suites`` and ``gate``; triage reads ``triage``; agents
read ``agents``. Unknown keys are errors (a typo must not silently do nothing).

Errors: :class:`ConfigError` whose message names each problem by file, line and column, the key
path as the user wrote it (a list item by its ``name``: ``areas[autows].paths``) and the reason,
with "did you mean" for an unknown key (bot/config/locate.py); nothing is half-loaded.
"""
from __future__ import annotations

import dataclasses
import fnmatch
import functools
import os
import re
from pathlib import Path
from typing import Any, Callable

import pygit2
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from bot.config import locate
from bot.config.agents import AgentSettings
from bot.config.gate import GateSettings
from bot.config.github import GitHubSettings
from bot.config.renames import DEFAULT_RENAME_LIMIT
from bot.config.schedules import ScheduleSettings
from bot.config.suites import SuiteConfig, UntrustedConfigError, suite_problems
from bot.config.triage import TriageSettings


class UserError(Exception):
    """Bad input the user can fix (bad ref, unknown unit id, missing credentials …); the CLI prints
    it without a traceback and exits 2."""


class ConfigError(ValueError):
    """A configuration that cannot be used. ``problems`` is ``[(key_path, reason), …]`` (key path
    by name, ``areas[autows].divergent``; ``""`` for the whole file); ``positions`` is aligned with
    it: ``(line, column)``, both 1-based, or None where the problem has no place in a file (no
    file, or a value given by a flag); both are kept in file order. The message has one line per problem,
    ``FILE:LINE:COLUMN: PATH: REASON``, as compilers print them so editors can jump there."""

    def __init__(self, source: str, problems: list[tuple[str, str]],
                 positions: list[tuple[int, int] | None] | None = None):
        self.source = source
        positions = list(positions) if positions is not None else [None] * len(problems)
        # in file order, as an editor lists a compiler's errors (pydantic reports them in the
        # model's field order); problems without a place keep their order, after the others
        order = sorted(range(len(problems)), key=lambda i: (positions[i] is None, positions[i] or (0, 0)))
        self.problems = [problems[i] for i in order]
        self.positions = [positions[i] for i in order]
        super().__init__(f"invalid forksync configuration in {source}:\n" + "\n".join(self.lines()))

    def lines(self) -> list[str]:
        """One line per problem (a YAML syntax error adds the offending line and a caret)."""
        out = []
        for (path, reason), pos in zip(self.problems, self.positions):
            where = f"{self.source}:{pos[0]}:{pos[1]}: " if pos else "  - "
            what = f"{path}: {reason}" if path else reason
            out.append(f"  {where}{what}" if pos else f"{where}{what}")
        return out


class ConfigFileMissing(ConfigError):
    """``--config FILE`` names no file: said as that, with the absolute path (a relative one is
    relative to the current directory, which the user may not have in mind)."""

    def __init__(self, path: Path):
        super().__init__(str(path), [("", "file not found")])
        what = "is not a file" if path.exists() else "does not exist"
        self.args = (f"the configuration file {path.absolute()} {what}",)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RemoteSpec(_Strict):
    """A repository and the ref to read: ``url`` is a remote URL or a local path; ``ref`` a
    branch, tag or any commit-ish (sha)."""

    url: str = ""
    ref: str = "main"

    def full_name(self) -> str | None:
        """``owner/name`` of a repository on a GitHub (``owner/name``, ``https://HOST/owner/name[.git]``
        or ``git@HOST:owner/name.git``); None for a local path or anything else."""
        m = re.match(r"^(?:[a-z][a-z0-9+.\-]*://[^/]+/|[\w.\-]+@[\w.\-]+:)?([\w.\-]+/[\w.\-]+?)(?:\.git)?/?$", self.url)
        return m.group(1) if m and not self.url.startswith(("/", ".", "~", "file:")) else None


class TrailerRule(_Strict):
    """A user-given provenance rule: a regex whose group ``sha`` captures an upstream sha (full or
    abbreviated, ≥ 7 hex). ``meaning`` is what a match says about that upstream commit."""

    name: str
    pattern: str
    meaning: str = Field("picked", pattern="^(picked|reverted|deferred|skipped|wont-port)$")

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, v: str) -> str:
        try:
            rx = re.compile(v, re.MULTILINE)
        except re.error as e:
            raise ValueError(f"not a valid regular expression: {e}") from None
        if "sha" not in rx.groupindex:
            raise ValueError("the pattern needs a named group (?P<sha>…) for the upstream sha")
        return v


class ProvenanceRules(_Strict):
    """How the ledger recognises upstream commits in the fork's history (see docs/design.md)."""

    forksync_trailers: bool = True          # Upstream-Commit / -Deferred / -Wont-Port / -Skipped / -Reverted / -Urgent
    cherry_picked_from: bool = True         # git cherry-pick -x: "(cherry picked from commit <sha>)"
    trailers: list[TrailerRule] = Field(default_factory=list)
    pr_citations: bool = True               # upstream "#N" cited in fork subjects/bodies
    pr_citation_pattern: str = r"(?<![\w/])(?:triton-lang/triton)?#(\d{2,6})\b"
    patch_id: bool = True
    ancestry: bool = True
    reverts: bool = True
    notes_ref: str = "refs/notes/forksync"
    # a subject citation is a strong pick claim only with one of these markers (see bot/core/provenance.py)
    pick_markers: list[str] = Field(default_factory=lambda: [
        r"(?i)cherry[- ]?pick", r"(?i)back[- ]?port", r"(?i)\[pick\]", r"(?i)\bbundle\b", r"(?i)\bsync\b"])
    # regexes whose group 1 is the fork's OWN PR number (never an upstream citation)
    own_pr_patterns: list[str] = Field(default_factory=lambda: [r"Pull Request resolved:\s*\S*/pull/(\d+)"])

    # checked here, not where the ledger first uses them: a bad pattern must be a config error
    # naming its file, line and key, not a traceback from the analysis thread
    @field_validator("notes_ref")
    @classmethod
    def _notes_ref(cls, v: str) -> str:
        # expanded as `git notes --ref` expands it (git-notes(1)): refs/notes/… as given, notes/…
        # under refs/, anything else under refs/notes/
        full = v if v.startswith("refs/notes/") else f"refs/{v}" if v.startswith("notes/") else f"refs/notes/{v}"
        if not pygit2.reference_is_valid_name(full):
            raise ValueError(f"{v!r} is not a valid notes reference name (refs/notes/<name>, or <name> as "
                             f"git notes --ref takes it)")
        return full

    @field_validator("pr_citation_pattern")
    @classmethod
    def _citation_compiles(cls, v: str) -> str:
        return _regex_with_group(v)

    @field_validator("own_pr_patterns")
    @classmethod
    def _own_compile(cls, v: list[str]) -> list[str]:
        return [_regex_with_group(p) for p in v]

    @field_validator("pick_markers")
    @classmethod
    def _markers_compile(cls, v: list[str]) -> list[str]:
        return [_regex(p) for p in v]


def _regex(pattern: str) -> str:
    """``pattern`` when it compiles; ValueError naming it otherwise."""
    try:
        re.compile(pattern)
    except re.error as e:
        raise ValueError(f"pattern '{pattern}' is not a valid regular expression: {e}") from None
    return pattern


def _regex_with_group(pattern: str) -> str:
    """``pattern`` when it compiles and has a group 1 (the PR number it captures)."""
    if re.compile(_regex(pattern)).groups < 1:
        raise ValueError(f"pattern '{pattern}' needs a group (…) capturing the PR number")
    return pattern


class IsolatedPickRules(_Strict):
    """Which picks are *isolated* (urgent, out of sequence) and so do not move the frontier.
    A commit is isolated when it carries ``Upstream-Urgent:`` or its message matches one of
    ``message_patterns``. ``max_gap``/``min_run`` are the fallback for histories with neither:
    reached commits are grouped into clusters whose neighbours lie at most ``max_gap`` upstream
    commits apart; a cluster that starts more than ``max_gap`` commits after the previous one (or
    the base) and holds fewer than ``min_run`` commits is an island of isolated picks (see
    bot/core/pins.py; measuring from the contiguous pin failed on the Triton fork, whose pin is stuck
    292 days back while ingestion is current)."""

    message_patterns: list[str] = Field(default_factory=list)
    max_gap: int = Field(200, ge=0)
    min_run: int = Field(3, ge=1)

    @field_validator("message_patterns")
    @classmethod
    def _patterns_compile(cls, v: list[str]) -> list[str]:
        return [_regex(p) for p in v]


class Area(_Strict):
    """A named part of the code base, shared by every feature (risk, labels, owners, gating)."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.\-]+$")
    paths: list[str] = Field(default_factory=list)      # fnmatch globs from the repository root, ** allowed (one matching no file is warned)
    symbols: list[str] = Field(default_factory=list)    # regexes over symbol names
    owners: list[str] = Field(default_factory=list)     # GitHub logins, in any case (as GitHub compares them); @login too
    divergent: bool = False      # the fork's own code: upstream commits touching it go to a chain
    requires_l3: bool = False    # changes here need an L3 sign-off before merge

    @field_validator("paths")
    @classmethod
    def _paths_from_the_root(cls, v: list[str]) -> list[str]:
        # git names paths from the repository root with no leading "./" or "/"; a glob written
        # the shell's or CODEOWNERS' way ("./x/**", "/x/**": anchored at the root) means the same
        out = []
        for g in v:
            while g.startswith("./"):
                g = g[2:]
            out.append(g.lstrip("/") if g.startswith("/") else g)
        if any(not g or g.startswith("../") for g in out):
            raise ValueError("a path glob is relative to the repository root and cannot be empty or start with ../")
        return out

    @field_validator("owners")
    @classmethod
    def _owners_are_logins(cls, v: list[str]) -> list[str]:
        # CODEOWNERS writes @alice: the login is alice. A team (@org/team) names no login the
        # gate could compare a review with
        out = []
        for o in v:
            login = o.strip().removeprefix("@")
            if "/" in login:
                raise ValueError(f"{o!r} is a team; owners are GitHub logins (list the team's members)")
            if not login or any(c.isspace() for c in login):
                raise ValueError(f"{o!r} is not a GitHub login")
            out.append(login)
        return out

    @field_validator("symbols")
    @classmethod
    def _symbols_compile(cls, v: list[str]) -> list[str]:
        for s in v:
            try:
                re.compile(s)
            except re.error as e:
                # quoted as written in the file (repr would double its backslashes, and a
                # search of the file for the pattern it names would find nothing)
                raise ValueError(f"symbol pattern '{s}' is not a valid regular expression: {e}") from None
        return v

    def matches_path(self, path: str) -> bool:
        return _globs_regex(tuple(self.paths)).match(path) is not None

    def matches_symbol(self, symbol: str) -> bool:
        """Whether one of the ``symbols`` regexes matches ``symbol`` (``re.search``)."""
        return any(r.search(symbol) for r in _compiled(tuple(self.symbols)))


def unmatched_area_globs(areas, paths) -> list[tuple[str, tuple[str, ...]]]:
    """Pure: ``[(area name, (glob, …)), …]``, in the areas' order, of each area's ``paths`` globs
    that match none of ``paths`` (repository-root file paths, e.g. every file at the fork's and
    upstream's tips), matched as :meth:`Area.matches_path` does; areas whose every glob matches
    something are left out. Such a glob is most often a typo or a folder that moved: it routes no
    upstream commit to the area (for a divergent area, to a chain), and nothing else would say so."""
    paths = tuple(paths)
    out = []
    for a in areas:
        dead = tuple(g for g in a.paths if not any(_globs_regex((g,)).match(p) for p in paths))
        if dead:
            out.append((a.name, dead))
    return out


@functools.lru_cache(maxsize=256)
def _compiled(patterns: tuple[str, ...]) -> tuple[re.Pattern, ...]:
    """``patterns`` compiled once (the planner asks areas about thousands of symbols)."""
    return tuple(re.compile(p) for p in patterns)


@functools.lru_cache(maxsize=256)
def _globs_regex(patterns: tuple[str, ...]) -> re.Pattern:
    """One compiled regex matching what :func:`glob_match` matches for any of ``patterns`` (the
    planner asks an area about every path of every pending commit)."""
    alts = []
    for g in patterns:
        if g.endswith("/"):
            g += "**"
        alts.append(fnmatch.translate(g))
        if "**/" in g:
            alts.append(fnmatch.translate(g.replace("**/", "")))
    return re.compile("|".join(alts) if alts else r"(?!)")


def glob_match(path: str, pattern: str) -> bool:
    """``fnmatch`` with ``**`` crossing directories and a trailing ``/`` meaning "everything below"."""
    if pattern.endswith("/"):
        pattern += "**"
    if fnmatch.fnmatchcase(path, pattern):
        return True
    if "**/" in pattern and fnmatch.fnmatchcase(path, pattern.replace("**/", "")):
        return True
    return False


class ResolvedPickMarkers(_Strict):
    """How the fork's history marks a pick whose conflicts a person resolved (read by the resolve
    benchmark, :mod:`bot.resolve.replay`). A fork commit is a resolved pick when its subject
    matches one of ``subject_patterns``, its body one of ``body_patterns`` or it carries the
    ``trailer``; defaults match the Triton fork (``[Cherry-pick][RESOLVED] '…'``, a
    ``Conflict Resolution:`` block with File / Action / Reason) and what forksync writes."""

    subject_patterns: list[str] = Field(default_factory=lambda: [r"\[RESOLVED\]", r"\[CONFLICTS\]"])   # regexes over the subject
    body_patterns: list[str] = Field(default_factory=lambda: [r"(?m)^Conflict Resolution:\s*$"])   # regexes over the message
    trailer: str = "Resolved-by"            # a trailer forksync writes on resolved picks ("" = none)

    @field_validator("subject_patterns", "body_patterns")
    @classmethod
    def _compile(cls, v: list[str]) -> list[str]:
        for s in v:
            try:
                re.compile(s)
            except re.error as e:
                raise ValueError(f"pattern '{s}' is not a valid regular expression: {e}") from None
        return v


#: Every deterministic conflict rule by name, in the order they are tried (see bot/resolve/rules.py).
RESOLVE_RULES = ("rerere", "fork-keeps", "fork-deleted", "upstream-deleted", "fork-ahead", "upstream-file", "fork-has-change",
                 "divergent-hunks", "additive-union", "fork-ahead-hunks", "line-merge")
#: The rules enabled by default (docs/resolve.md): ``fork-deleted`` and ``fork-ahead`` for precision
#: ≥ 0.98 on the development part (the older two thirds) of the Triton fork's resolved picks, each
#: with decisions there; ``rerere`` (git rerere: a person's own earlier resolution of the very same
#: conflict hunks, replayed) for none wrong on the second fork it was scored on, Intel's merges of
#: upstream (5 / 5; with Triton 6 / 6), a fork no rule was developed on.
DEFAULT_RESOLVE_RULES = ("rerere", "fork-deleted", "fork-ahead")


class ResolveSettings(_Strict):
    """Deterministic conflict resolution, tried before any agent (docs/resolve.md).

    ``rules``: the rules tried, in order (default: ``DEFAULT_RESOLVE_RULES``, none wrong on the
    real forks they were scored on; ``RESOLVE_RULES`` lists them all).
    ``keep_fork_areas`` / ``keep_fork_paths``: where the fork keeps its own file on a conflict
    (version bumps, pins, CI files the fork maintains itself): area names and path globs.
    ``merges``: the fork syncs by merging upstream, so its merges of upstream are resolved
    conflicts too — the resolve benchmark and the rules' memory replay them beside the picks."""

    picks: ResolvedPickMarkers = ResolvedPickMarkers()      # how the fork's history marks resolved picks
    merges: bool = False        # also replay the fork's merges of upstream (a fork that syncs by merging; docs/resolve.md)
    rules: list[str] = Field(default_factory=lambda: list(DEFAULT_RESOLVE_RULES))   # rules tried in order (docs/resolve.md)
    keep_fork_areas: list[str] = Field(default_factory=list)    # areas where a conflict keeps the fork's file
    keep_fork_paths: list[str] = Field(default_factory=list)    # path globs where a conflict keeps the fork's file

    @field_validator("rules")
    @classmethod
    def _known_rules(cls, v: list[str]) -> list[str]:
        bad = [r for r in v if r not in RESOLVE_RULES]
        if bad:
            raise ValueError(f"unknown rule(s) {', '.join(bad)}; known: {', '.join(RESOLVE_RULES)}")
        return v


class ForksyncConfig(_Strict):
    upstream: RemoteSpec = RemoteSpec()
    fork: RemoteSpec = RemoteSpec()
    provenance: ProvenanceRules = ProvenanceRules()
    isolated_picks: IsolatedPickRules = IsolatedPickRules()
    areas: list[Area] = Field(default_factory=list)
    bundle_size_cap: int = Field(50, ge=1, le=10_000)
    chain_size_cap: int = Field(25, ge=1, le=10_000)   # commits per chain PR; beyond it chains stack (docs/plan.md)
    cache_dir: str = ".forksync-cache"
    rename_detection: bool = True
    # rename candidates forksync's merges examine (plan and apply, libgit2 and git alike); the
    # user's merge.renameLimit is never read (bot/config/renames.py)
    rename_limit: int = Field(DEFAULT_RENAME_LIMIT, ge=1, le=1_000_000)
    github: GitHubSettings = GitHubSettings()
    suites: list[SuiteConfig] = Field(default_factory=list)
    gate: GateSettings = GateSettings()
    triage: TriageSettings = TriageSettings()
    agents: AgentSettings = AgentSettings()
    resolve: ResolveSettings = ResolveSettings()       # deterministic conflict rules, tried before any agent
    schedules: ScheduleSettings = ScheduleSettings()   # when the worker's scheduled validation runs (interval or cron)

    @field_validator("areas")
    @classmethod
    def _unique_areas(cls, v: list[Area]) -> list[Area]:
        seen: set[str] = set()
        for a in v:
            if a.name in seen:
                raise ValueError(f"area name {a.name!r} is used twice")
            seen.add(a.name)
        return v

    def areas_for_paths(self, paths) -> tuple[str, ...]:
        return tuple(a.name for a in self.areas if any(a.matches_path(p) for p in paths))


#: GitHub refuses a label name longer than this ("name is too long (maximum is 50 characters)")
LABEL_LIMIT = 50


def label_problems(cfg: ForksyncConfig) -> list[tuple[str, str]]:
    """``[(key path, reason)]`` for each area whose label on sync PRs (``github.labels.area_prefix``
    + its name) GitHub would refuse: longer than :data:`LABEL_LIMIT` characters. Adding it would
    fail every sync PR touching the area."""
    prefix = cfg.github.labels.area_prefix
    return [(f"areas.{i}.name", f"its label {prefix + a.name!r} has {len(prefix + a.name)} characters; GitHub allows at "
                                f"most {LABEL_LIMIT} in a label name: shorten the area's name or github.labels.area_prefix")
            for i, a in enumerate(cfg.areas) if len(prefix + a.name) > LABEL_LIMIT]


class _Located:
    """Problems with their key paths by name and their positions in the YAML text (when known)."""

    def __init__(self, data: Any, root: yaml.Node | None):
        self.data, self.root = data, root
        self.problems: list[tuple[str, str]] = []
        self.positions: list[tuple[int, int] | None] = []

    def add(self, loc: tuple, reason: str, key: bool = False) -> None:
        self.problems.append((locate.named_path(self.data, loc), reason))
        self.positions.append(locate.position(self.root, loc, key))


def _reason(err: dict) -> str:
    if err["type"] == "extra_forbidden":
        return locate.unknown_key_reason(ForksyncConfig, tuple(err["loc"]))
    msg = err["msg"]
    if err["type"] == "list_type":
        # most often one value written where the key takes a list (`paths: lib/**`)
        return f"{msg}: write `[a, b]`, or one `- a` per line below the key"
    return msg.removeprefix("Value error, ")     # pydantic's prefix for a validator's own message


def parse_config(data: Any, source: str = "<config>", root: yaml.Node | None = None) -> ForksyncConfig:
    """Validate already-parsed YAML/JSON data; ``root`` is its YAML node tree when there is one
    (:func:`bot.config.locate.compose`), for line and column. Raises :class:`ConfigError` with
    every problem at once."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(source, [("", f"the top level must be a mapping, not {type(data).__name__}")],
                          [locate.position(root, ())])
    found = _Located(data, root)
    for loc, reason, _pos in locate.duplicate_keys(root):
        found.add(loc, reason, key=True)
    try:
        cfg = ForksyncConfig.model_validate(data)
    except ValidationError as e:
        for err in e.errors():
            found.add(tuple(err["loc"]), _reason(err), key=err["type"] == "extra_forbidden")
        raise ConfigError(source, found.problems, found.positions) from None
    problems = suite_problems(cfg.suites, [a.name for a in cfg.areas])   # checks across sections
    problems += [("resolve.keep_fork_areas", f"unknown area {n!r}") for n in cfg.resolve.keep_fork_areas
                 if n not in {a.name for a in cfg.areas}]
    problems += label_problems(cfg)
    for path, reason in problems:
        found.add(locate.parse_loc(path), reason)
    if found.problems:
        raise ConfigError(source, found.problems, found.positions)
    return cfg


def _yaml_error(source: str, text: str, e: yaml.YAMLError) -> ConfigError:
    """A YAML syntax error as a :class:`ConfigError` naming ``source`` (PyYAML's own message
    names the stream, ``<unicode string>``, not the file), with the offending line and a caret —
    and, when the construct it was parsing began on an earlier line (an unclosed ``[``), that
    line too, since the fix is usually there."""
    mark = getattr(e, "problem_mark", None)
    problem = getattr(e, "problem", None) or str(e)
    context, cmark = getattr(e, "context", None), getattr(e, "context_mark", None)
    reason = f"not valid YAML: {problem}"
    if context:
        reason += f" ({context}" + (f" that starts on line {cmark.line + 1}, column {cmark.column + 1})" if cmark else ")")
    lines = text.splitlines()
    for m in ([cmark] if cmark is not None and mark is not None and cmark.line != mark.line else []) + [mark]:
        if m is not None and 0 <= m.line < len(lines):
            reason += f"\n    {m.line + 1:>5} | {lines[m.line]}\n    {'':>5} | {' ' * m.column}^"
    return ConfigError(source, [("", reason)], [(mark.line + 1, mark.column + 1) if mark is not None else None])


def _read_yaml(text: str, source: str) -> tuple[Any, yaml.Node | None]:
    """``(data, node tree)`` of ``text``. Raises :class:`ConfigError` on a YAML syntax error."""
    try:
        return yaml.safe_load(text), locate.compose(text)
    except yaml.YAMLError as e:
        raise _yaml_error(source, text, e) from None


def parse_config_text(text: str, source: str = "<config>") -> ForksyncConfig:
    """Parse and validate YAML text (e.g. ``.github/forksync.yml`` read through the API); problems
    name ``source`` with line and column. Raises :class:`ConfigError`."""
    data, root = _read_yaml(text, source)
    return parse_config(data, source, root)


def load_config(path: str | os.PathLike | None, overrides: dict[str, str | None] | None = None) -> ForksyncConfig:
    """Load ``path`` (None → defaults; a missing file given explicitly is an error) and apply CLI
    overrides ``{"upstream.url": …, "upstream.ref": …, "fork.url": …, "fork.ref": …}``.
    Relative local paths in ``upstream.url``/``fork.url``/``cache_dir`` of the file are resolved
    against the config file's folder (or the current directory without one); a relative path
    given as an override (``--upstream``/``--fork``) against the current directory, as a shell
    user means it."""
    base_dir = Path.cwd()
    data: dict[str, Any] = {}
    root: yaml.Node | None = None
    source = "<defaults>"
    if path is not None:
        p = Path(path)
        source = str(p)
        if not p.is_file():
            raise ConfigFileMissing(p)
        raw = p.read_bytes()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            line = raw.count(b"\n", 0, e.start) + 1
            col = e.start - (raw.rfind(b"\n", 0, e.start) + 1) + 1
            raise ConfigError(source, [("", f"not UTF-8 text (byte 0x{raw[e.start]:02x}); save the file as UTF-8")],
                              [(line, col)]) from None
        data, root = _read_yaml(text, source)
        data = {} if data is None else data
        if not isinstance(data, dict):
            raise ConfigError(source, [("", f"the top level must be a mapping, not {type(data).__name__}")],
                              [locate.position(root, ())])
        base_dir = p.resolve().parent
    for key, value in (overrides or {}).items():
        if value is None:
            continue
        section, name = key.split(".", 1)
        if name == "url" and _is_local(value) and not os.path.isabs(value):
            value = str((Path.cwd() / value).resolve())
        data.setdefault(section, {})
        if not isinstance(data[section], dict):
            # the value the flag would go into is the file's mistake: said where it is
            raise ConfigError(source, [(section, f"must be a mapping (with url, ref), not {type(data[section]).__name__}")],
                              [locate.position(root, (section,)) if root is not None else None])
        data[section][name] = value
    cfg = parse_config(data, source, root)
    upd: dict[str, Any] = {}
    for side in ("upstream", "fork"):
        spec: RemoteSpec = getattr(cfg, side)
        if spec.url and _is_local(spec.url) and not os.path.isabs(spec.url):
            upd[side] = spec.model_copy(update={"url": str((base_dir / spec.url).resolve())})
    if not os.path.isabs(cfg.cache_dir):
        upd["cache_dir"] = str((base_dir / cfg.cache_dir).resolve())
    return cfg.model_copy(update=upd) if upd else cfg


@dataclasses.dataclass(frozen=True)
class SettingOrigin:
    """Where one of the four repository settings (``upstream.url``, ``upstream.ref``,
    ``fork.url``, ``fork.ref``) was given: ``flag`` (``--fork-ref``) when a command-line flag set
    it, else ``position`` (``FILE:LINE:COLUMN``, the file as the user named it) in the
    configuration file; ``given`` is the value as written, and ``relative_to`` the folder a
    relative local path in the file was resolved against (empty otherwise)."""

    key: str
    given: str
    flag: str = ""
    position: str = ""
    relative_to: str = ""


def setting_origin(path: str | os.PathLike | None, overrides: dict[str, str | None] | None, key: str) -> SettingOrigin | None:
    """Where ``key`` (``"fork.ref"`` …) of the configuration :func:`load_config` builds from the
    same ``path`` and ``overrides`` was given; None where neither a flag nor the file sets it (the
    default). Reads the file again: meant for an error about that setting, after the file loaded
    (a file that no longer parses gives None)."""
    side, name = key.split(".", 1)
    flag_value = (overrides or {}).get(key)
    if flag_value is not None:
        return SettingOrigin(key, flag_value, flag=f"--{side}" if name == "url" else f"--{side}-{name}")
    if path is None:
        return None
    try:
        text = Path(path).read_text(encoding="utf-8")
        data, root = yaml.safe_load(text), locate.compose(text)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    section = data.get(side) if isinstance(data, dict) else None
    if not isinstance(section, dict) or section.get(name) is None:
        return None
    given = str(section[name])
    pos = locate.position(root, (side, name))
    relative = name == "url" and _is_local(given) and not os.path.isabs(given)
    return SettingOrigin(key, given, position=f"{path}:{pos[0]}:{pos[1]}" if pos else str(path),
                         relative_to=str(Path(path).resolve().parent) if relative else "")


def on_default_branch(cfg: ForksyncConfig, default_branch: str) -> ForksyncConfig:
    """Pure: ``cfg`` with ``fork.ref`` set to the fork's default branch on GitHub when the
    configuration does not name one (``fork.ref`` absent from the file and from the overrides, or
    empty); ``cfg`` itself otherwise, or when ``default_branch`` is empty. The model's own default,
    ``main``, stands only where no GitHub repository says otherwise (the CLI on local clones)."""
    if not default_branch or (cfg.fork.ref and "ref" in cfg.fork.model_fields_set):
        return cfg
    return cfg.model_copy(update={"fork": cfg.fork.model_copy(update={"ref": default_branch})})


def _is_local(url: str) -> bool:
    return not re.match(r"^[a-z][a-z0-9+.\-]*://|^[\w.\-]+@[\w.\-]+:", url)


def load_trusted_suites(read_text: Callable[[str, str], str | None], default_branch: str,
                        path: str = ".github/forksync.yml") -> tuple[SuiteConfig, ...]:
    """Suites the merge gate trusts: parsed from ``path`` **at the fork's default branch**.

    ``read_text(ref, path)`` returns a file's text at a ref (None when absent) — the edge (GitHub
    contents API or git) supplies it. This function only ever asks for ``default_branch``; the
    PR's head is deliberately not a parameter. A missing file means no suites (the gate then
    falls back to "≥ 1 required check, all green"). Raises :class:`UntrustedConfigError` with the
    config errors when the default branch's file is invalid."""
    text = read_text(default_branch, path)
    if text is None:
        return ()
    try:
        cfg = parse_config_text(text, f"{path}@{default_branch}")
    except ConfigError as e:
        raise UntrustedConfigError(str(e)) from None
    problems = suite_problems(cfg.suites, [a.name for a in cfg.areas])
    if problems:
        raise UntrustedConfigError(
            f"invalid suites in {path}@{default_branch}:\n" + "\n".join(f"  - {p}: {r}" for p, r in problems))
    return tuple(cfg.suites)
