"""The agents run from the command line (``forksync resolve UNIT --agent``, ``forksync bench
resolve --agent``) against the local Anthropic server: what the model is sent and what the
person reads must hold none of the deployment's secrets, as under ``forksync serve``."""
from __future__ import annotations

import pygit2
import pytest

from bot.agents.redact import forget_secrets
from bot.cli.main import main
from bot.fakeanthropic import FakeAnthropic, Reply
from bot.git import repo as gitio
from bot.git.apply import apply_unit
from bot.model import PlanItem, Unit
from tests.agents.test_conflict import git, make_repo, write
from tests.support.resolve_history import build_history

#: Secret values of no recognisable shape (no prefix, no ``secret=`` label before them).
WEBHOOK_SECRET = "Zq9Vn3KtLm7Wc2Rb"
TOKEN = "v1.8f3ac2d9e41b7a06"
KEY_LINE = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7"


@pytest.fixture(autouse=True)
def _no_registered_secrets():
    forget_secrets()
    yield
    forget_secrets()


def _secret_env(monkeypatch, tmp_path) -> None:
    key = tmp_path / "app.pem"
    key.write_text(f"-----BEGIN RSA PRIVATE KEY-----\n{KEY_LINE}\n-----END RSA PRIVATE KEY-----\n")
    monkeypatch.setenv("FORKSYNC_WEBHOOK_SECRET", WEBHOOK_SECRET)
    monkeypatch.delenv("FORKSYNC_SETTINGS_FILE", raising=False)
    monkeypatch.setenv("FORKSYNC_TOKEN", TOKEN)
    monkeypatch.setenv("FORKSYNC_PRIVATE_KEY_FILE", str(key))
    monkeypatch.setenv("FORKSYNC_ANTHROPIC_KEY", "k")


def test_resolve_agent_sends_no_configured_secret_to_the_model(tmp_path, monkeypatch, capsys):
    """A user runs ``forksync resolve UNIT --agent`` where forksync's settings are exported
    (FORKSYNC_TOKEN, FORKSYNC_PRIVATE_KEY_FILE) or in ./forksync.env (FORKSYNC_WEBHOOK_SECRET),
    as for ``forksync serve``. The upstream
    commit message and the conflicted file happen to hold those values (a token pasted into a
    commit, a key line committed by mistake). Seen: the values go to the Anthropic API verbatim
    (only shape-based redaction runs on the CLI), and the API's error text echoing one is printed.
    Should be: as under ``forksync serve``, every configured value is replaced before sending and
    printing."""
    root, fork, up = make_repo(tmp_path, upstream_message=f"[ops] rename line 3\n\nci token {TOKEN}")
    # the fork's conflicted line carries the webhook secret and a line of the App's key
    write(root, "python/triton/ops.py",
          (root / "python/triton/ops.py").read_text().replace("line 3 fork\n", f"line 3 fork {WEBHOOK_SECRET} {KEY_LINE}\n"))
    git(root, "commit", "-qam", "fork: tag line 3")
    fork = git(root, "rev-parse", "HEAD")
    git(root, "branch", "-f", "forksync/chain-test", fork)
    info = gitio.commit_info(pygit2.Repository(str(root)), up)
    res = apply_unit(str(root), Unit(id="chain-test", kind="chain", items=(PlanItem(up, "test"),)), base=fork,
                     commits={up: info})
    assert res.conflict == up and res.conflict_commit
    _secret_env(monkeypatch, tmp_path)
    # the webhook secret only in the settings file serve reads (./forksync.env), not exported
    monkeypatch.delenv("FORKSYNC_WEBHOOK_SECRET")
    (tmp_path / "forksync.env").write_text(f"FORKSYNC_WEBHOOK_SECRET={WEBHOOK_SECRET}\n")
    monkeypatch.chdir(tmp_path)
    g = ["--fork", str(root), "--upstream", str(root), "--upstream-ref", "upstream"]
    # the API refuses the request, quoting a value from it in its message (as a 400 may)
    script = [Reply(status=400, error_message=f"tools.0: unexpected text near '{WEBHOOK_SECRET}'")]
    with FakeAnthropic(script, api_key="k").in_thread() as ant:
        code = main(["resolve", "chain-test", "--agent", "--base-url", ant.base_url, "--db", str(tmp_path / "f.db"), *g])
        sent = ant.bodies
    out = capsys.readouterr()
    assert code == 1 and len(sent) == 1
    for value in (WEBHOOK_SECRET, TOKEN, KEY_LINE):
        assert value not in sent[0], f"{value} reached the model"
        assert value not in out.out + out.err, f"{value} printed"
    assert "[REDACTED-configured-" in sent[0]


def test_bench_resolve_agent_sends_no_configured_secret_to_the_model(tmp_path, monkeypatch, capsys):
    """``forksync bench resolve --agent`` replays the fork's resolved picks and sends the files the
    rules declined to the model. A configured secret's value that occurs in those files (here the
    webhook secret is a string the history's ``reg.h`` holds, standing for a secret committed in a
    fork file) is sent as it is. Should be: replaced, as under ``forksync serve``."""
    h = build_history(tmp_path / "repo")
    monkeypatch.chdir(tmp_path)
    _secret_env(monkeypatch, tmp_path)
    monkeypatch.setenv("FORKSYNC_WEBHOOK_SECRET", "b_upstream")
    g = ["--fork", str(h.path), "--upstream", str(h.path), "--upstream-ref", "upstream", "--fork-ref", "main"]
    script = [Reply.tool("resolve_conflicts", {"files": [], "summary": "none"}, sticky=True)]
    with FakeAnthropic(script, api_key="k").in_thread() as ant:
        assert main([*g, "bench", "resolve", "--rules", "fork-deleted,fork-ahead", "--agent", "--base-url",
                     ant.base_url, "--db", str(tmp_path / "runs.sqlite"), "--json"]) == 0
        sent = ant.bodies
    capsys.readouterr()
    assert sent and any("reg.h" in b for b in sent)
    assert [b for b in sent if "b_upstream" in b] == []
