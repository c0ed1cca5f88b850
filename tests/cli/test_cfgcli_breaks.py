"""Configuration and the CLI as a new user meets them: bad input must get one clear line (file,
line and key for the configuration), exit 2, and lose nothing — never a Python traceback, never
an error that names the wrong thing, never a silently wrong answer."""
from __future__ import annotations

import asyncio
import json
import subprocess
import threading

import aiohttp
import pytest

from bot.cli.main import main
from tests.support.cli import run
from tests.support.ledger_scenario import build


@pytest.fixture(scope="module")
def scn(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cfgcli")
    s = build(tmp / "repos")
    s.tmp = tmp
    s.argv = ["--upstream", str(s.up.path), "--fork", str(s.fork.path)]
    return s


# --- forksync.yml ---------------------------------------------------------------------------------

def test_a_forksync_yml_that_is_not_utf8_is_named(scn, tmp_path, capsys):
    """A forksync.yml saved as Latin-1 (an owner's name with an accent, written by an editor on
    Windows): the user sees a UnicodeDecodeError traceback and exit 1. They should see one line
    naming the file and that it is not UTF-8 text (as the serve settings file already does),
    exit 2."""
    cfg = tmp_path / "forksync.yml"
    cfg.write_bytes(b"areas:\n  - name: kernels\n    owners: [jos\xe9]\n    paths: [python/**]\n")
    rc, out, err = run(capsys, ["--config", str(cfg), *scn.argv, "status"])
    assert rc == 2
    assert str(cfg) in err and "UTF-8" in err and "Traceback" not in err


def test_a_bad_notes_ref_is_named_as_the_key_it_is(scn, tmp_path, capsys):
    """``provenance.notes_ref: 'not a ref'`` passed validation, then every command said ``forksync:
    --as-of: …: the given reference name … is not valid`` — blaming an --as-of flag the user never
    gave, with no file, line or key. It is a configuration problem at ``forksync.yml:2:…:
    provenance.notes_ref`` (exit 2), like every other bad key."""
    cfg = tmp_path / "forksync.yml"
    cfg.write_text("provenance:\n  notes_ref: 'not a ref'\n")
    rc, out, err = run(capsys, ["--config", str(cfg), *scn.argv, "status"])
    assert rc == 2
    assert "--as-of" not in err
    assert f"{cfg}:2:" in err and "provenance.notes_ref" in err


@pytest.mark.parametrize("value", ["forksync", "notes/forksync", "refs/notes/forksync"])
def test_a_notes_ref_is_taken_as_git_notes_takes_it(value):
    """``git notes --ref forksync`` means ``refs/notes/forksync`` (git-notes(1)); the same short
    name in ``provenance.notes_ref`` made every command fail. It is expanded as git expands it."""
    from bot.config.forksync import parse_config_text
    assert parse_config_text(f"provenance:\n  notes_ref: {value}\n").provenance.notes_ref == "refs/notes/forksync"


def test_a_flag_over_a_bad_section_keeps_the_line_of_the_problem(scn, tmp_path, capsys):
    """``upstream: https://github.com/triton-lang/triton`` (a URL where a mapping belongs) is
    reported as ``forksync.yml:1:11: upstream: Input should be a valid dictionary …`` — but as
    soon as ``--upstream-ref`` is also given the same mistake becomes ``  - upstream: must be a
    mapping``, with no file line or column. The position should stay."""
    cfg = tmp_path / "forksync.yml"
    cfg.write_text(f"upstream: {scn.up.path}\nfork:\n  url: {scn.fork.path}\n")
    rc, _, err_plain = run(capsys, ["--config", str(cfg), "status"])
    assert rc == 2 and f"{cfg}:1:11: upstream:" in err_plain
    rc, _, err = run(capsys, ["--config", str(cfg), "--upstream-ref", "main", "status"])
    assert rc == 2
    assert f"{cfg}:1:11: upstream:" in err


# --- the cache ------------------------------------------------------------------------------------

@pytest.mark.parametrize("content", [b"garbage\n", b"SQLite format 3\x00" + b"\x00" * 200],
                         ids=["not-sqlite", "truncated"])
def test_a_corrupt_cache_database_is_named_not_a_traceback(scn, tmp_path, capsys, content):
    """The CLI's cache (``cache_dir``/forksync.sqlite — "a cache", rebuildable from git) was
    truncated (disk full, a copy cut short) or overwritten: every command dies with
    ``sqlite3.DatabaseError: file is not a database`` and a traceback. ``forksync serve`` says
    the same thing in one line (bot/cli/serve.py:open_store); the CLI should too: name the file,
    say it is corrupt and what to do (delete it: it is a cache), exit 2."""
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "forksync.sqlite").write_bytes(content)
    cfg = tmp_path / "forksync.yml"
    cfg.write_text(f"cache_dir: {cache}\n")
    rc, out, err = run(capsys, ["--config", str(cfg), *scn.argv, "status"])
    assert rc == 2
    assert str(cache / "forksync.sqlite") in err


# --- the fork's repository ------------------------------------------------------------------------

def _git(*argv, cwd=None):
    subprocess.run(["git", *argv], cwd=cwd, check=True, capture_output=True)


@pytest.mark.parametrize("depth", [3, 1])
def test_a_shallow_clone_of_the_fork_is_named(scn, tmp_path, capsys, depth):
    """``git clone --depth N`` of the fork (what CI checkouts and ``actions/checkout`` make):
    ``status`` dies with ``_pygit2.GitError: object not found - no match for id (…)`` and a
    traceback (exit 1), from the merge-base walk hitting the shallow boundary. Shallow clones are
    mentioned nowhere in the docs. It should say the fork is a shallow clone and how to fix it
    (``git fetch --unshallow``), exit 2."""
    shallow = tmp_path / "shallow"
    _git("clone", "-q", f"--depth={depth}", f"file://{scn.fork.path}", str(shallow))
    rc, out, err = run(capsys, ["--upstream", str(scn.up.path), "--fork", str(shallow), "status", "--json"])
    assert rc == 2, out[:300]
    assert "shallow" in err and str(shallow) in err


# --- `--upstream-ref` older than the fork's picks ---------------------------------------------------

def test_picks_past_an_older_upstream_ref_are_not_called_a_rewritten_history(scn, tmp_path, capsys):
    """``--upstream-ref v-old`` (a release tag, or a local upstream copy last fetched before the
    fork's newest picks): the fork's Upstream-Commit records of commits *after* that tip — all
    in the upstream repository, descendants of the tag — are reported as "Was upstream's history
    rewritten? Those picks and decisions do not apply to the new commits; re-record them". Nothing
    was rewritten and re-recording would be wrong; the warning should say these commits lie past
    the chosen upstream tip (or that the upstream copy is behind)."""
    up = scn.up.path
    _git("tag", "-f", "v-old", scn.u["u10"], cwd=up)
    rc, out, err = run(capsys, [*scn.argv, "--upstream-ref", "v-old", "status", "--json"])
    assert rc == 0
    doc = json.loads(out)
    assert doc["unresolved_provenance"]           # the records past the tag are kept and listed …
    assert "rewritten" not in err                 # … but not as a rewritten history
    assert "re-record" not in err


# --- listening ports --------------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [
    ["dashboard", "--port", "99999"],
    ["dashboard", "--port", "-1"],
    ["app", "setup", "--port", "70000", "--no-browser", "--timeout", "5"],
], ids=["dashboard-high", "dashboard-negative", "app-setup"])
def test_a_port_out_of_range_is_a_clear_error(tmp_path, capsys, monkeypatch, argv):
    """``forksync dashboard --port 99999`` (one digit too many) and ``forksync app setup --port
    70000`` die with ``OverflowError: bind(): port must be 0-65535.`` and a traceback (exit 1);
    ``serve`` checks the same value (FORKSYNC_PORT) and says so in one line. They should too:
    exit 2, naming --port and its range."""
    from bot.store import Store

    monkeypatch.chdir(tmp_path)
    db = tmp_path / "forksync.db"
    Store(str(db)).close()
    if argv[0] == "dashboard":
        argv = [*argv, "--db", str(db)]
    else:
        argv = [*argv, "--settings", str(tmp_path / "forksync.env")]
    rc, out, err = run(capsys, argv)
    assert rc == 2
    assert "--port" in err and "65535" in err


# --- app setup: nothing GitHub hands over once may be lost ------------------------------------------

async def test_app_setup_that_cannot_write_its_settings_loses_nothing(fake_github, tmp_path, capsys):
    """``forksync app setup --settings FILE`` where FILE cannot be written (its folder is a file;
    a read-only mount): the user goes through GitHub, the App is created, the one-time code is
    exchanged (GitHub hands the private key and secrets over once), then writing fails with an
    OSError inside the page handler — the browser gets a 500, and the CLI waits its whole
    --timeout and then says "GitHub did not send the browser back … run it again", which creates
    a second App. It should check the settings (and key) destination before sending the user to
    GitHub, or else say at once what failed and where the key went; never wait out the timeout."""
    from tests.cli.test_app_setup import follow_setup_page
    from tests.support.processes import free_port

    blocker = tmp_path / "conf"
    blocker.write_text("a file, not a folder\n")
    settings = blocker / "forksync.env"
    port = free_port()
    argv = ["app", "setup", "--url", "https://fs.example.org", "--name", "forksync-lost", "--github-url", fake_github.url,
            "--port", str(port), "--settings", str(settings), "--no-browser", "--timeout", "8"]
    rc: list[int] = []
    thread = threading.Thread(target=lambda: rc.append(main(argv)))
    thread.start()
    page_url = f"http://127.0.0.1:{port}/"
    for _ in range(200):
        if not thread.is_alive():       # refused before sending anyone to GitHub
            break
        try:
            await follow_setup_page(page_url)
            break
        except aiohttp.ClientConnectorError:
            await asyncio.sleep(0.05)
        except AssertionError:          # the redirect back was answered with an error page
            break
    await asyncio.to_thread(thread.join, 60)
    err = capsys.readouterr().err
    assert rc == [2], err
    assert "did not send the browser back" not in err
    assert str(settings) in err
