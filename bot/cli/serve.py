"""``forksync serve`` (web app + worker), ``forksync worker`` (worker only) and ``forksync queue``.

Settings (one pydantic-settings model, :class:`ServeSettings`) come from flags, else environment
variables, else the settings file, else defaults (docs/github.md, "Settings"). The settings file
is dotenv (``FORKSYNC_NAME=value``, quoted where needed): ``--settings FILE``, else
``$FORKSYNC_SETTINGS_FILE``, else ``./forksync.env`` when it exists. This table is generated
from the model (:func:`settings_table`; a test keeps it current):

| flag | environment / settings file | default | meaning |
|---|---|---|---|
| `--host` (serve) | `FORKSYNC_HOST` | `127.0.0.1` | listen address |
| `--port` (serve) | `FORKSYNC_PORT` | `8080` | listen port |
| `--webhook-secret` (serve) | `FORKSYNC_WEBHOOK_SECRET` | (secret) | webhook secret (required for serve) |
| — | `FORKSYNC_WEBHOOK_SECRET_FILE` | — | a file holding the webhook secret, read when no webhook secret is given |
| `--app-id` | `FORKSYNC_APP_ID` | — | GitHub App id (App mode) |
| `--private-key-file` | `FORKSYNC_PRIVATE_KEY_FILE` | — | the App's PEM private key (its own file, mode 0600) |
| `--token` | `FORKSYNC_TOKEN` | (secret) | plain token mode instead of an App (exclusive with App mode) |
| `--db` | `FORKSYNC_DB` | `forksync.db` | SQLite database file |
| `--github-url` | `FORKSYNC_GITHUB_URL` | `https://api.github.com` | REST API base URL |
| `--git-url` | `FORKSYNC_GIT_URL` | `https://github.com/{owner}/{repo}.git` | clone URL template with {owner} {repo} |
| `--workdir` | `FORKSYNC_WORKDIR` | `.forksync-work` | git working copies |
| `--bot-login` | `FORKSYNC_BOT_LOGIN` | — | the bot's login, for the loop guard and PR ownership (App: `<slug>[bot]`, GET /app; token: GET /user) |
| `--workers` (serve) | `FORKSYNC_WORKERS` | `1` | worker processes (0 = none: web only) |
| `--no-poll` | `FORKSYNC_POLL` | `True` | poll upstream and run the validation schedules (`--no-poll`: neither) |
| — | `FORKSYNC_LEASE_S` | `120.0` | worker lease, s |
| — | `FORKSYNC_MAX_ATTEMPTS` | `5` | tries before a delivery is dead-lettered |
| — | `FORKSYNC_KEEP_DELIVERIES_DAYS` | `14.0` | days a done delivery (its body too) is kept; dead letters stay |
| — | `FORKSYNC_DELIVERY_TIMEOUT_S` | `21600.0` | cancel (then retry) a delivery's attempt still running after this, s |
| — | `FORKSYNC_AGENT_DEADLINE_S` | `0.0` | no conflict agent call starts or goes on this long after a sync began, s (0: half the delivery timeout) |
| `--header-timeout` (serve) | `FORKSYNC_HEADER_TIMEOUT_S` | `10.0` | close a connection without complete request headers (or idle) after this, s |
| — | `FORKSYNC_OAUTH_CLIENT_ID` | — | the App's OAuth client id (dashboard sign-in) |
| — | `FORKSYNC_OAUTH_CLIENT_SECRET` | (secret) | the App's OAuth client secret |
| — | `FORKSYNC_SESSION_SECRET` | (secret) | key of the dashboard's session cookie |
| — | `FORKSYNC_METRICS_TOKEN` | (secret) | bearer token for `/metrics` with every fork named (empty: no series names a fork) |
| — | `FORKSYNC_APP_SLUG` | — | the App's slug (github.com/apps/<slug>) |
| — | `FORKSYNC_EXPECT_WORKER` | `False` | `/healthz` waits for a worker running elsewhere on the same database (compose) |
| — | `FORKSYNC_RUNNER_BACKEND` | — | where suites run: `local` (when empty) or `github-actions` (self-hosted GPU runners; docs/gpu-runners.md) |
| — | `FORKSYNC_REPOSITORY` | — | `owner/name` of the forksync the GPU workflow installs (empty: forksync/forksync) |
| — | `FORKSYNC_REVISION` | — | the forksync commit the GPU workflow installs (empty: the image's, else this checkout's HEAD) |
| `--settings FILE` | `FORKSYNC_SETTINGS_FILE` | `./forksync.env` when it exists | the settings file (dotenv) |

Secrets are never logged: :meth:`ServeSettings.redacted` is what gets printed.
"""
from __future__ import annotations

import argparse
import asyncio
import difflib
import getpass
import io
import json
import logging
import os
import signal
import sqlite3
import string
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping
from urllib.parse import urlsplit

from dotenv.main import resolve_variables
from dotenv.parser import parse_stream
from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, EnvSettingsSource, SettingsConfigDict
from pydantic_settings.sources.utils import parse_env_vars

from bot.agents.redact import register_secrets, scrub
from bot.app import queue as q
from bot.app.poller_lock import PollerRunning, hold_poller
from bot.cli.text import say, text
from bot.config.forksync import UserError
from bot.config.suites import RUNNER_BACKENDS as BACKENDS
from bot.store import Store, UpgradeFailed

log = logging.getLogger(__name__)


def _setting(default, meaning: str, *, flag: str | None = None, web: bool = False, secret: bool = False, **bounds):
    """A field of :class:`ServeSettings`: its default, what it means (for the settings table and
    ``--help``), its flag (``web``: only ``serve`` has it), whether its value is a secret, and the
    range a number must be in (pydantic's ``ge``/``gt``/``le``, ``allow_inf_nan``)."""
    return Field(default, description=meaning, json_schema_extra={"flag": flag, "web": web, "secret": secret}, **bounds)


class ServeSettings(BaseSettings):
    """Everything ``serve`` and ``worker`` are told. Each field ``name`` is the environment variable
    (and settings-file key) ``FORKSYNC_<NAME>``. Built directly (tests, the demo) only the given
    values and the defaults count; :func:`settings_from` layers flags, environment and file."""

    model_config = SettingsConfigDict(env_prefix="FORKSYNC_", frozen=True, extra="ignore")

    host: str = _setting("127.0.0.1", "listen address", flag="--host", web=True)
    port: int = _setting(8080, "listen port", flag="--port", web=True, ge=0, le=65535)
    webhook_secret: str = _setting("", "webhook secret (required for serve)", flag="--webhook-secret", web=True, secret=True)
    webhook_secret_file: str = _setting("", "a file holding the webhook secret, read when no webhook secret is given")
    app_id: str = _setting("", "GitHub App id (App mode)", flag="--app-id")
    private_key_file: str = _setting("", "the App's PEM private key (its own file, mode 0600)", flag="--private-key-file")
    token: str = _setting("", "plain token mode instead of an App (exclusive with App mode)", flag="--token", secret=True)
    db: str = _setting("forksync.db", "SQLite database file", flag="--db")
    github_url: str = _setting("https://api.github.com", "REST API base URL", flag="--github-url")
    git_url: str = _setting("https://github.com/{owner}/{repo}.git", "clone URL template with {owner} {repo}", flag="--git-url")
    workdir: str = _setting(".forksync-work", "git working copies", flag="--workdir")
    bot_login: str = _setting("", "the bot's login, for the loop guard and PR ownership (App: `<slug>[bot]`, GET /app; "
                                  "token: GET /user)", flag="--bot-login")
    workers: int = _setting(1, "worker processes (0 = none: web only)", flag="--workers", web=True, ge=0)
    poll: bool = _setting(True, "poll upstream and run the validation schedules (`--no-poll`: neither)", flag="--no-poll")
    # a lease over when taken lets a second worker claim the delivery in progress; a NaN one never ends
    lease_s: float = _setting(120.0, "worker lease, s", gt=0, allow_inf_nan=False)
    max_attempts: int = _setting(5, "tries before a delivery is dead-lettered", ge=1)
    # every row keeps the body GitHub signed; GitHub redelivers only within 3 days
    keep_deliveries_days: float = _setting(14.0, "days a done delivery (its body too) is kept; dead letters stay",
                                         ge=3, allow_inf_nan=False)
    # the heartbeat renews a running delivery's lease, so only this limit frees one whose handler hangs
    delivery_timeout_s: float = _setting(6 * 3600.0, "cancel (then retry) a delivery's attempt still running after this, s",
                                         gt=0, allow_inf_nan=False)
    # one agent call may take about 3,100 s (retries included): the agent starts no call past
    # this, and a call still running then is cut
    agent_deadline_s: float = _setting(0.0, "no conflict agent call starts or goes on this long after a sync "
                                       "began, s (0: half the delivery timeout)", ge=0, allow_inf_nan=False)
    header_timeout_s: float = _setting(10.0, "close a connection without complete request headers (or idle) after this, s",
                                       flag="--header-timeout", web=True, gt=0, allow_inf_nan=False)
    oauth_client_id: str = _setting("", "the App's OAuth client id (dashboard sign-in)")
    oauth_client_secret: str = _setting("", "the App's OAuth client secret", secret=True)
    session_secret: str = _setting("", "key of the dashboard's session cookie", secret=True)
    metrics_token: str = _setting("", "bearer token for `/metrics` with every fork named (empty: no series names a fork)",
                                  web=True, secret=True)
    app_slug: str = _setting("", "the App's slug (github.com/apps/<slug>)")
    expect_worker: bool = _setting(False, "`/healthz` waits for a worker running elsewhere on the same database (compose)", web=True)
    runner_backend: str = _setting("", "where suites run: `local` (when empty) or `github-actions` (self-hosted GPU runners; "
                                       "docs/gpu-runners.md)")
    repository: str = _setting("", "`owner/name` of the forksync the GPU workflow installs (empty: forksync/forksync)")
    revision: str = _setting("", "the forksync commit the GPU workflow installs (empty: the image's, else this "
                                 "checkout's HEAD)")

    @field_validator("runner_backend")
    @classmethod
    def _known_backend(cls, v: str) -> str:
        if v and v not in BACKENDS:
            raise ValueError(f"is not a runner backend; use one of {', '.join(BACKENDS)}")
        return v

    @field_validator("git_url")
    @classmethod
    def _git_url_template(cls, v: str) -> str:
        # a misspelt placeholder fails every fetch; none at all fetches every fork from one URL
        try:
            names = {f for _, f, _, _ in string.Formatter().parse(v) if f is not None}
        except ValueError as e:
            raise ValueError(f"is not a template ({e})") from None
        if names != {"owner", "repo"}:
            odd = sorted(names - {"owner", "repo"})
            raise ValueError("must be a clone URL template with both {owner} and {repo} and no other placeholder"
                             + (f" (it has {', '.join('{' + n + '}' for n in odd)})" if odd else ""))
        return v

    @classmethod
    def settings_customise_sources(cls, settings_cls, init_settings, **_):
        return (init_settings,)     # the other layers are put together by settings_from

    def redacted(self) -> dict:
        """The settings for a log line: secrets as ``***``, URLs without their userinfo."""
        d = self.model_dump()
        for k in SECRETS:
            d[k] = "***" if d[k] else ""
        for k in ("git_url", "github_url"):
            d[k] = scrub(d[k])
        if self._key_in_file_setting():
            d["private_key_file"] = "***"
        return d

    def _key_in_file_setting(self) -> bool:
        """Whether ``private_key_file`` holds the PEM key itself instead of a file name (a common
        mix-up): then it is a secret, never to be printed."""
        return "PRIVATE KEY" in self.private_key_file or "\n" in self.private_key_file.strip()

    def register_secrets(self) -> None:
        """Make every secret of these settings one that logs and agent prompts never show
        (:func:`bot.agents.redact.register_secrets`): webhook secret, token, OAuth client secret,
        session secret, the App's key, and a password or token inside ``git_url`` / ``github_url``.
        Raises :class:`NotPemKey` when the key file holds no PEM text (a DER conversion); a key file
        that cannot be read yet is the worker's error when it starts (it may be mounted later)."""
        values = [getattr(self, k) for k in SECRETS]
        for url in (self.git_url, self.github_url):
            try:
                parts = urlsplit(url)
                values += [parts.password, parts.username if parts.password is None else None]
            except ValueError:
                pass
        if self._key_in_file_setting():
            values.append(self.private_key_file)
        try:
            values.append(self.private_key())
        except NotPemKey:
            register_secrets(*values)   # the other secrets are hidden all the same
            raise               # no mount or restart will make it one: said now, not by each worker later
        except UserError:
            pass
        register_secrets(*values)

    def private_key(self) -> str:
        if not self.private_key_file:
            return ""
        if self._key_in_file_setting():
            raise UserError(text("serve", "key_in_file_setting"))
        try:
            return Path(self.private_key_file).read_text(encoding="ascii")
        except UnicodeDecodeError:
            raise NotPemKey(text("serve", "key_not_pem", file=self.private_key_file)) from None
        except OSError as e:
            raise UserError(text("serve", "key_unreadable", file=self.private_key_file, error=e.strerror)) from None


class NotPemKey(UserError):
    """The App's key file holds bytes that are no PEM text."""


SECRETS = tuple(n for n, f in ServeSettings.model_fields.items() if f.json_schema_extra["secret"])


def env_name(field: str) -> str:
    return f"FORKSYNC_{field.upper()}"


def _flag(field: str) -> str | None:
    return ServeSettings.model_fields[field].json_schema_extra["flag"]


class _Environment(EnvSettingsSource):
    """pydantic-settings' environment source over a given mapping instead of ``os.environ``."""

    def __init__(self, environ: Mapping[str, str]):
        self._environ = environ
        super().__init__(ServeSettings)

    def _load_env_vars(self):
        return parse_env_vars(self._environ, self.case_sensitive, self.env_ignore_empty, self.env_parse_none_str)


def settings_file(args: argparse.Namespace, environ: Mapping[str, str]) -> tuple[Path | None, str]:
    """The settings file and where it was named: ``--settings``, else ``FORKSYNC_SETTINGS_FILE``,
    else ``./forksync.env`` when it exists, else ``(None, "")``; none for a worker ``forksync
    serve`` started (``--settings-from-serve``: its environment holds every setting serve read and
    checked, and the file may have been moved or edited since). Raises UserError for a named file
    that is not there."""
    if getattr(args, "settings_from_serve", False):
        return None, ""
    for given, by in ((getattr(args, "settings", None), "--settings"), (environ.get("FORKSYNC_SETTINGS_FILE"), "FORKSYNC_SETTINGS_FILE")):
        if given:
            if not Path(given).is_file():
                raise UserError(text("serve", "settings_file_missing", file=given, by=by))
            return Path(given), by
    default = Path("forksync.env")
    return (default, "./forksync.env") if default.is_file() else (None, "")


@dataclass(frozen=True)
class SettingsFile:
    """The settings file, read once: ``values`` as python-dotenv reads them (``export``, quotes,
    ``${VAR}`` expanded; a key without ``=`` is None), ``lines``: the line of each key's last
    assignment (the one that counts), ``bad``: lines that are not ``KEY=value`` (ignored)."""

    path: Path
    by: str
    values: dict[str, str | None]
    lines: dict[str, int]
    bad: tuple[int, ...] = ()

    def where(self, key: str) -> str:
        """``settings file PATH, line N`` (without the line for a key the file does not hold)."""
        line = self.lines.get(key)
        return f"settings file {self.path}" + (f", line {line}" if line else "")


def read_settings_file(path: Path, by: str) -> SettingsFile:
    """Read the settings file ``path`` (named by ``by``) once; everything about it — the values,
    the unknown keys, the lines of bad values — is derived from this one read. Raises UserError for
    a file that cannot be read or is not UTF-8."""
    try:
        content = path.read_text(encoding="utf-8")
    except OSError as e:
        raise UserError(text("serve", "settings_file_unreadable", file=path, by=by, error=e.strerror)) from None
    except UnicodeDecodeError as e:
        raise UserError(text("serve", "settings_file_not_utf8", file=path, by=by, byte=e.start)) from None
    bindings = list(parse_stream(io.StringIO(content)))
    pairs = [(b.key, b.value) for b in bindings if b.key is not None]
    return SettingsFile(path, by, dict(resolve_variables(pairs, override=True)),
                        {b.key: b.original.line for b in bindings if b.key is not None},
                        tuple(b.original.line for b in bindings if b.error))


def unknown_keys(keys) -> list[tuple[str, str]]:
    """``(key, text)`` for each ``FORKSYNC_*`` key of a settings file that no setting reads (a typo
    leaves its setting at the default), the text naming the nearest setting when one is close
    (difflib); other keys are not forksync's and are left alone (compose passes the same file to
    other tools)."""
    known = {env_name(n) for n in ServeSettings.model_fields} | {"FORKSYNC_SETTINGS_FILE"}
    out = []
    for k in keys:
        if k.startswith("FORKSYNC_") and k not in known:
            near = difflib.get_close_matches(k, sorted(known), n=1, cutoff=0.8)
            out.append((k, f"{k} is not a setting forksync reads (ignored)" + (f"; did you mean {near[0]}?" if near else "")))
    return out


def settings_from(args: argparse.Namespace, environ: Mapping[str, str] = os.environ) -> ServeSettings:
    """Flags, else environment, else the settings file, else defaults (one value per field, the
    first layer that has it wins). The settings file is read once (:func:`read_settings_file`):
    a ``FORKSYNC_*`` key no setting reads and a line that is not ``KEY=value`` are warnings naming
    the file and line. Raises UserError naming the setting and where a bad value came from (the
    flag, the environment, or the settings file and line), or for an unreadable settings or
    secret file."""
    flags = {n: getattr(args, n) for n in ServeSettings.model_fields if _flag(n) and getattr(args, n, None) is not None}
    if getattr(args, "no_poll", False):
        flags["poll"] = False
    path, by = settings_file(args, environ)
    file = read_settings_file(path, by) if path else None
    from_file = _Environment(file.values)() if file else {}
    if file:
        for line in file.bad:
            log.warning("settings file %s, line %d: not a KEY=value line (ignored)", path, line)
        for key, unknown in unknown_keys(file.values):
            log.warning("%s: %s", file.where(key), unknown)
    layers = ((flags, "flag"), (_Environment(environ)(), "environment"), (from_file, "settings file"))
    values: dict = {}
    for layer, _ in reversed(layers):
        values.update(layer)
    if "webhook_secret" not in values and values.get("webhook_secret_file"):
        try:
            values["webhook_secret"] = Path(values["webhook_secret_file"]).read_text(encoding="utf-8").strip()
        except OSError as e:
            raise UserError(text("serve", "secret_file_unreadable", error=e.strerror)) from None
        except UnicodeDecodeError:
            raise UserError(text("serve", "secret_file_not_text", file=values["webhook_secret_file"])) from None
    try:
        s = ServeSettings(**values)
    except ValidationError as e:
        err = e.errors()[0]
        name = str(err["loc"][0])
        source = next(where for layer, where in layers if name in layer)
        if source == "settings file" and file:
            source = file.where(_file_key(file, name))
        kind = ("number" if err["type"] in ("int_parsing", "float_parsing", "int_from_float") else
                "range" if err["type"] in ("greater_than", "greater_than_equal", "less_than_equal", "finite_number") else "")
        raise UserError(text("serve", "bad_setting", env=env_name(name), flag=_flag(name) or "", value=repr(values[name]),
                             kind=kind, msg=err["msg"], source=source)) from None
    if s.token and s.app_id:
        raise UserError(text("serve", "token_and_app"))
    if s.app_id and not s.private_key_file:
        raise UserError(text("serve", "app_without_key"))
    if s.agent_deadline_s >= s.delivery_timeout_s:
        raise UserError(text("serve", "agent_deadline_too_late", deadline=f"{s.agent_deadline_s:g}",
                             timeout=f"{s.delivery_timeout_s:g}"))
    return s


def _file_key(file: SettingsFile, field: str) -> str:
    """The key of the settings file that set ``field`` (keys are read case-insensitively)."""
    want = env_name(field).lower()
    return next((k for k in reversed(list(file.values)) if k.lower() == want), env_name(field))


def register_deployment_secrets(args: argparse.Namespace, environ: Mapping[str, str] = os.environ) -> None:
    """Register the secrets of the settings ``serve`` would read (flags, environment, settings file:
    :meth:`ServeSettings.register_secrets`) for any command, so an agent's prompt, a printed error
    or a log line of ``forksync resolve --agent``, ``bench resolve --agent`` … never shows one.
    Lenient: settings that would not validate, a settings file or key file that cannot be read,
    register what can be read and raise nothing — the command at hand does not need them, and
    ``serve`` says what is wrong with them."""
    flags = {n: getattr(args, n) for n in ServeSettings.model_fields
             if _flag(n) and isinstance(getattr(args, n, None), str)}
    values: dict = {}
    try:
        path, by = settings_file(args, environ)
        if path:
            values.update(_Environment(read_settings_file(path, by).values)())
    except (UserError, ValueError):
        pass
    try:
        values.update(_Environment(environ)())
    except ValueError:
        pass
    values.update(flags)
    secret_file = values.get("webhook_secret_file")
    if not values.get("webhook_secret") and secret_file:
        try:
            values["webhook_secret"] = Path(secret_file).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            pass
    # unvalidated on purpose: a bad port must not stop `forksync resolve` from hiding the token
    s = ServeSettings.model_construct(**{k: v for k, v in values.items() if k in ServeSettings.model_fields})
    try:
        s.register_secrets()
    except UserError:
        pass


def settings_table() -> str:
    """The settings as a markdown table (flag, environment variable / settings-file key, default,
    meaning), generated from :class:`ServeSettings` for the docs."""
    rows = ["| flag | environment / settings file | default | meaning |", "|---|---|---|---|"]
    for name, f in ServeSettings.model_fields.items():
        flag = _flag(name)
        default = "(secret)" if f.json_schema_extra["secret"] else (f"`{f.default}`" if f.default not in ("", None) else "—")
        web = " (serve)" if f.json_schema_extra["web"] else ""
        rows.append(f"| {f'`{flag}`{web}' if flag else '—'} | `{env_name(name)}` | {default} | {f.description} |")
    rows.append("| `--settings FILE` | `FORKSYNC_SETTINGS_FILE` | `./forksync.env` when it exists | the settings file (dotenv) |")
    return "\n".join(rows) + "\n"


def register(sub, common) -> None:
    def add_settings(p: argparse.ArgumentParser, web: bool) -> None:
        fields = ServeSettings.model_fields
        for name in sorted(fields, key=lambda n: not fields[n].json_schema_extra["web"]):     # serve's own flags first
            f, flag = fields[name], _flag(name)
            if flag == "--no-poll":
                p.add_argument(flag, dest="no_poll", action="store_true",
                               help="don't poll upstream nor run the validation schedules (nightly, L2, L3, collect, reconcile)")
            elif flag and (web or not f.json_schema_extra["web"]):
                default = f", {f.default}" if f.default not in ("", None) else ""
                p.add_argument(flag, dest=name, help=f"{f.description} [{env_name(name)}{default}]")
        p.add_argument("--settings", metavar="FILE", help="settings file, dotenv FORKSYNC_NAME=value lines "
                                                          "[FORKSYNC_SETTINGS_FILE, ./forksync.env when present]")

    p = sub.add_parser("serve", parents=[common], help="run the GitHub App: webhook server + queue worker")
    add_settings(p, web=True)
    # serve and worker register their validated settings' secrets themselves (the key file's
    # NotPemKey said at once), so main's lenient registration does not run for them as well
    p.set_defaults(func=cmd_serve, registers_secrets=True)
    p = sub.add_parser("worker", parents=[common], help="run only the queue worker (no web server)")
    add_settings(p, web=False)
    # serve's own workers: every setting is in their environment already, checked by serve
    p.add_argument("--settings-from-serve", action="store_true", help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_worker, registers_secrets=True)
    p = sub.add_parser("queue", parents=[common], help="list webhook deliveries (incl. dead letters); retry or dismiss one")
    p.add_argument("--db", help="SQLite database [FORKSYNC_DB, forksync.db]")
    p.add_argument("--settings", metavar="FILE", help="settings file [FORKSYNC_SETTINGS_FILE, ./forksync.env when present]")
    p.add_argument("--state", action="append", choices=list(q.STATES),
                   help="only these states (repeatable)")
    p.add_argument("--limit", type=int, default=50, help="the newest N deliveries (default 50)")
    p.add_argument("--retry", metavar="ID", help="put a dead/failed (or dismissed) delivery back in the queue")
    p.add_argument("--dismiss", metavar="ID", help="settle a dead letter that can never succeed (a malformed payload): "
                                                   "no longer an alarm (/healthz, /metrics, the status issue), still "
                                                   "listed (--state dismissed), never deleted; recorded with who and when")
    p.add_argument("--reason", metavar="TEXT", default="", help="with --dismiss: why, kept with the dismissal")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.set_defaults(func=cmd_queue)


def cmd_queue(args: argparse.Namespace) -> int:
    db = settings_from(args).db       # the same database as serve's: flag, environment, settings file, default
    if not Path(db).exists():
        raise UserError(text("serve", "no_database", db=db))
    if args.reason and not args.dismiss:
        raise UserError(text("serve", "reason_without_dismiss"))
    with open_store(db) as store:
        if args.retry:
            if not q.retry_dead(store, args.retry):
                raise UserError(text("serve", "no_such_delivery", id=repr(args.retry)))
            say("serve", "queued_again", id=args.retry)
            return 0
        if args.dismiss:
            who = operator_login()
            if not q.dismiss(store, args.dismiss, by=who, reason=" ".join(args.reason.split())):
                raise UserError(text("serve", "no_dead_delivery", id=repr(args.dismiss)))
            say("serve", "dismissed", id=args.dismiss, by=who)
            return 0
        rows = q.listing(store, args.state, args.limit)
        counts = q.counts(store)
    if args.json:
        for d in rows:
            print(q.as_json(d))
        return 0
    say("serve", "counts", counts=counts)
    for d in rows:
        # a dead letter that a later success did the work of is kept as history, with what resolved it;
        # a paused delivery says why it waits (its installation is suspended)
        say("serve", "delivery", d=d, when=time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(d.received_at)),
            dismissed_when=time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(d.dismissed_at)))
    return 0


def operator_login() -> str:
    """Who runs ``forksync queue`` (its login: ``LOGNAME``, ``USER``, else the uid's account name),
    recorded with a dismissal; ``"unknown"`` when the system has no name for them (a container's
    uid without a passwd entry)."""
    try:
        return getpass.getuser() or "unknown"
    except (KeyError, OSError):
        return "unknown"


def cmd_serve(args: argparse.Namespace) -> int:
    s = settings_from(args)
    if not s.webhook_secret:
        raise UserError(text("serve", "no_webhook_secret"))
    if s.workers and not (s.token or s.app_id):
        # the workers would each stop at this and be restarted for ever behind a listening server
        raise UserError(text("serve", "no_credentials"))
    s.register_secrets()
    logging.getLogger().setLevel(logging.INFO)
    log.info("forksync serve: %s", json.dumps(s.redacted()))
    return run_serve(s)


def cmd_worker(args: argparse.Namespace) -> int:
    from bot.app.runtime import run_worker_loop  # lazy: the App loads for serve and worker only, not for every CLI command

    s = settings_from(args)
    s.register_secrets()
    # serve's own polling worker runs under serve's hold on the poller lock
    poller = hold_poller_or_say(s.workdir, s.db) if s.poll and not args.settings_from_serve else None
    try:
        open_store(s.db).close()        # a missing directory, read-only or corrupt database: one line, exit 2
        logging.getLogger().setLevel(logging.INFO)
        stop = threading.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: (stop.set()))
        asyncio.run(run_worker_loop(s, stop, poller=s.poll))
    finally:
        if poller is not None:
            poller.release()
    return 0


def hold_poller_or_say(workdir: str, db: str):
    """The poller locks of the workdir and the database (:func:`bot.app.poller_lock.hold_poller`)
    for a process that will poll them. Raises :class:`UserError` naming the workdir or database
    and the process that polls it already (the second of two pollers would dispatch each nightly
    and L2 run again), or the lock file (or workdir) that cannot be made."""
    try:
        return hold_poller(workdir, db)
    except PollerRunning as e:
        raise UserError(text("serve", "poller_running", kind=e.kind, path=e.path, pid=e.pid, host=e.host)) from None
    except OSError as e:
        raise UserError(text("serve", "poller_lock_unusable", path=e.filename or workdir, error=e.strerror)) from None


def _die_with_parent() -> None:
    """In a worker child: get SIGKILL when ``forksync serve`` dies (Linux ``PR_SET_PDEATHSIG``)."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):
        pass


def worker_env(s: ServeSettings, index: int) -> dict[str, str]:
    """The environment of serve's worker ``index``: serve's own with every setting as serve read
    and checked it (secrets travel here, never on a command line); the worker, started with
    ``--settings-from-serve``, reads no settings file, so one moved or edited while serve runs
    cannot stop a restarted worker (it applies at serve's next start)."""
    env = dict(os.environ)
    for name in ServeSettings.model_fields:
        env[env_name(name)] = str(getattr(s, name))
    env["FORKSYNC_WORKERS"] = "0"
    return env


class WorkerProcesses:
    """``forksync serve``'s workers: one ``forksync worker`` child process each (so handler work
    — git, GitHub calls — never competes with acknowledgements for the interpreter), restarted
    when one exits. Worker 0 also runs the upstream poller. Children die with the parent."""

    def __init__(self, s: ServeSettings):
        self.s = s
        self.procs: list = []
        self.restarts: list[float] = []         # monotonic times of restarts, for /healthz
        self.stop = threading.Event()
        self._thread = threading.Thread(target=self._supervise, name="forksync-workers", daemon=True)

    def _spawn(self, i: int):
        import subprocess
        argv = [sys.executable, "-c", "from bot.cli.main import main; raise SystemExit(main())", "worker",
                "--settings-from-serve"]
        if i > 0 or not self.s.poll:
            argv.append("--no-poll")
        return subprocess.Popen(argv, env=worker_env(self.s, i), preexec_fn=_die_with_parent)

    def start(self) -> "WorkerProcesses":
        self.procs = [self._spawn(i) for i in range(self.s.workers)]
        self._thread.start()
        return self

    def _supervise(self) -> None:
        while not self.stop.wait(1.0):
            for i, p in enumerate(self.procs):
                if p.poll() is not None and not self.stop.is_set():
                    log.warning("worker %d exited with %s; restarting", i, p.returncode)
                    self.restarts.append(time.monotonic())
                    self.procs[i] = self._spawn(i)

    def recent_restarts(self, window_s: float = 300.0) -> int:
        """How many times a worker was restarted in the last ``window_s`` seconds."""
        since = time.monotonic() - window_s
        return sum(1 for t in list(self.restarts) if t >= since)

    def request_stop(self) -> None:
        """Ask every worker to stop (SIGTERM: each hands back what it has not finished); no waiting."""
        self.stop.set()
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)

    def terminate(self, timeout: float = 30.0) -> None:
        self.request_stop()
        for p in self.procs:
            try:
                p.wait(timeout=timeout)
            except Exception:  # noqa: BLE001
                p.kill()


def open_store(db: str) -> Store:
    """The database for ``serve``/``worker``/``queue``. Raises :class:`UserError` (one line, exit 2)
    when its directory is missing (a mis-mounted volume must not silently get a fresh database),
    or it cannot be opened: read-only, not a SQLite database, its volume full, a disk I/O error,
    or the upgrade of an earlier release's database failed (then it says the database is intact)."""
    parent = Path(db).parent
    if db != ":memory:" and not parent.is_dir():
        raise UserError(text("serve", "database_folder_missing", db=db))
    if Path(db).is_dir():
        raise UserError(text("serve", "database_is_folder", db=db))
    try:
        return Store(db)
    except UpgradeFailed as e:
        cause = e.__cause__ if isinstance(e.__cause__, sqlite3.Error) else e
        raise UserError(text("serve", "database_not_upgraded", db=db, trouble=_sqlite_trouble(cause, upgrade=True),
                             error=str(cause))) from None
    except sqlite3.DatabaseError as e:
        raise UserError(text("serve", "database_unusable", db=db, trouble=_sqlite_trouble(e), error=str(e))) from None
    except OSError as e:
        raise UserError(text("serve", "database_unopenable", db=db, error=e.strerror)) from None


def _sqlite_trouble(e: Exception, upgrade: bool = False) -> str:
    """What SQLite's error ``e`` says of the database and what to do, by its result code
    (sqlite.org/rescode.html): a full volume or a failing disk is no corrupt database, and must not
    be answered with "restore it". Words to follow "the database X" (``upgrade``: to follow "could
    not be upgraded: ")."""

    code = (getattr(e, "sqlite_errorcode", None) or 0) & 0xFF       # the primary code of an extended one
    trouble = ("full" if code == sqlite3.SQLITE_FULL else "ioerr" if code == sqlite3.SQLITE_IOERR else
               "readonly" if code in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN) or "readonly" in str(e)
               or "unable to open" in str(e) else "other")
    return text("serve", "sqlite_trouble", trouble=trouble, upgrade=upgrade)


#: Addresses only this machine reaches: the dashboard may be served there without login.
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


def dashboard_access(s: ServeSettings):
    """The dashboard's GitHub login for these settings (None when no OAuth client is set).
    Raises :class:`UserError` naming what is missing when only part of it is set."""
    parts = {"FORKSYNC_OAUTH_CLIENT_ID": s.oauth_client_id, "FORKSYNC_OAUTH_CLIENT_SECRET": s.oauth_client_secret,
             "FORKSYNC_SESSION_SECRET": s.session_secret}
    if not any(parts.values()):
        return None
    missing = [k for k, v in parts.items() if not v]
    if missing:
        raise UserError(text("serve", "login_incomplete", missing=missing))
    from bot.dashboard.access import GitHubLogin  # lazy: sessions and OAuth load only for a deployed serve

    return GitHubLogin(client_id=s.oauth_client_id, client_secret=s.oauth_client_secret, session_secret=s.session_secret,
                       api_url=s.github_url, secure_cookie=s.host not in LOOPBACK)


def listen_socket(host: str, port: int):
    """A listening TCP socket on ``(host, port)`` (0 = any free port). Raises :class:`UserError`
    for a port outside 0–65535, a port in use or an address this machine does not have."""
    import errno
    import socket

    if not 0 <= port <= 65535:
        raise UserError(text("serve", "port_out_of_range", port=port))

    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(512)
    except socket.gaierror as e:
        sock.close()
        raise UserError(text("serve", "cannot_listen", host=host, port=port, error=str(e))) from None
    except OSError as e:
        sock.close()
        if e.errno == errno.EADDRINUSE:
            raise UserError(text("serve", "port_in_use", port=port, host=host)) from None
        raise UserError(text("serve", "cannot_listen", host=host, port=port, error=e.strerror)) from None
    return sock


def run_serve(s: ServeSettings) -> int:
    """Run the web app on (host, port) and ``s.workers`` worker processes until SIGTERM/SIGINT,
    holding the workdir's poller lock while its workers poll. Raises :class:`UserError` when
    another process polls the workdir already, naming it."""
    # before anything starts: a second poller on the workdir (a deploy that starts the new serve
    # before it stops the old one) is refused here, naming the one that polls it
    poller = hold_poller_or_say(s.workdir, s.db) if s.workers > 0 and s.poll else None
    try:
        return _run_serve(s)
    finally:
        if poller is not None:
            poller.release()


def _run_serve(s: ServeSettings) -> int:
    from aiohttp import web

    from bot.app.metrics import AppMetrics  # lazy: the App loads for serve and worker only, not for every CLI command
    from bot.app.web import make_app, mount_dashboard  # lazy: as above
    from bot.handlers import all_routers  # lazy: as above

    all_routers()               # import every handler module so all tables exist before a worker starts
    store = open_store(s.db)
    metrics_store = Store(s.db)
    sock = listen_socket(s.host, s.port)    # before the workers start: a port in use stops nothing half-started
    port = sock.getsockname()[1]
    metrics = AppMetrics(lambda: metrics_store)
    workers = WorkerProcesses(s).start() if s.workers > 0 else None
    # one expectation for /healthz and the dashboard's health page: a worker of ours, or one
    # running elsewhere on the same database (compose), must beat its heartbeat
    expect_worker = workers is not None or s.expect_worker
    restarts = workers.recent_restarts if workers is not None else None
    app = make_app(store, s.webhook_secret, metrics=metrics, expect_worker=expect_worker, worker_restarts=restarts,
                   metrics_token=s.metrics_token)
    if not s.metrics_token:
        say("serve", "metrics_unnamed", err=True)
    if workers is not None:
        async def stop_workers(_app) -> None:
            # at once, while the web server drains its connections: both fit in Docker's 10 s stop timeout
            workers.request_stop()
        app.on_shutdown.append(stop_workers)
    dashboard_store = Store(s.db)
    access = dashboard_access(s)
    if access is not None or s.host in LOOPBACK:
        mount_dashboard(app, dashboard_store, access=access, expect_worker=expect_worker, worker_restarts=restarts)
    else:
        say("serve", "dashboard_off", err=True, host=s.host)
    import gc
    gc.collect()
    gc.freeze()                         # startup objects never need collecting: shorter GC pauses
    gc.set_threshold(20_000, 20, 20)    # fewer collections on the acknowledgement path
    print(text("serve", "listening", host=s.host, port=port, db=s.db, workers=s.workers), file=sys.stderr, flush=True)
    try:
        # keepalive_timeout also closes a connection whose request headers never complete (aiohttp
        # starts that timer when the connection opens and closes it if no request has arrived).
        web.run_app(app, sock=sock, print=None, access_log=None, handle_signals=True, shutdown_timeout=5.0,
                    keepalive_timeout=s.header_timeout_s)
    finally:
        if workers is not None:
            workers.terminate()
        store.close()
        metrics_store.close()
        dashboard_store.close()
    return 0


__all__ = ["ServeSettings", "settings_from", "settings_table", "register", "run_serve", "dashboard_access", "LOOPBACK"]
