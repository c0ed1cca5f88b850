"""`forksync queue` (listing incl. dead letters, --retry) and the serve settings (flags > env)."""
import argparse
import json

import pytest

from bot.app import queue as q
from bot.cli.main import UserError, main
from bot.cli.serve import settings_from
from bot.store import Store


def ns(**kw):
    base = dict(host=None, port=None, webhook_secret=None, app_id=None, private_key_file=None, token=None, db=None,
                github_url=None, git_url=None, workdir=None, bot_login=None, workers=None, no_poll=False)
    base.update(kw)
    return argparse.Namespace(**base)


def test_flags_win_over_environment_and_secrets_are_redacted():
    env = {"FORKSYNC_PORT": "9000", "FORKSYNC_HOST": "0.0.0.0", "FORKSYNC_WEBHOOK_SECRET": "env-secret",
           "FORKSYNC_TOKEN": "ghp_x", "FORKSYNC_LEASE_S": "30"}
    s = settings_from(ns(port="8081"), env)
    assert (s.host, s.port, s.webhook_secret, s.token, s.lease_s) == ("0.0.0.0", 8081, "env-secret", "ghp_x", 30.0)
    assert s.redacted()["webhook_secret"] == "***" and s.redacted()["token"] == "***"


@pytest.mark.parametrize("args,env,message", [
    (dict(port="eighty"), {}, "FORKSYNC_PORT / --port: 'eighty' is not a number"),
    (dict(token="t", app_id="1"), {}, "give either FORKSYNC_TOKEN (token mode) or FORKSYNC_APP_ID"),
    (dict(app_id="1"), {}, "App mode needs FORKSYNC_PRIVATE_KEY_FILE"),
    # the agent's deadline must leave its last call time to end inside the delivery's limit
    (dict(), {"FORKSYNC_AGENT_DEADLINE_S": "9000", "FORKSYNC_DELIVERY_TIMEOUT_S": "7200"},
     "FORKSYNC_AGENT_DEADLINE_S (9000 s) must end before FORKSYNC_DELIVERY_TIMEOUT_S (7200 s)"),
    (dict(), {"FORKSYNC_AGENT_DEADLINE_S": "7200", "FORKSYNC_DELIVERY_TIMEOUT_S": "7200"},
     "FORKSYNC_AGENT_DEADLINE_S (7200 s) must end before FORKSYNC_DELIVERY_TIMEOUT_S (7200 s)"),
])
def test_bad_settings_are_clear_errors(args, env, message):
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace(")", r"\)")):
        settings_from(ns(**args), env)


def test_queue_lists_dead_letters_and_retries(tmp_path, capsys):
    db = tmp_path / "q.db"
    with Store(db) as store:
        q.enqueue(store, delivery_id="ok", hook_id="", event="ping", body=b"{}", now=1000)
        q.enqueue(store, delivery_id="bad", hook_id="", event="frobnicate", body=b"{}",
                  summary={"action": "x", "repo": "meta/triton"}, now=1001)
        d = q.claim(store, "w", now=1002)
        q.complete(store, d.id, "w", "pong", now=1002)
        d = q.claim(store, "w", now=1003)
        q.fail(store, d.id, "w", "no handler for event 'frobnicate'", permanent=True, now=1003)
    assert main(["queue", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "queued=0  processing=0  done=1  failed=0  dead=1  resolved=0  paused=0  dismissed=0"
    assert "dead       bad" in out and "frobnicate.x" in out and "meta/triton" in out
    assert "    dead: cannot be handled: no handler for event 'frobnicate'" in out
    assert main(["queue", "--db", str(db), "--state", "dead", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["id"], r["state"]) for r in rows] == [("bad", "dead")]
    assert main(["queue", "--db", str(db), "--retry", "bad"]) == 0
    assert capsys.readouterr().out == "bad: queued again\n"
    assert main(["queue", "--db", str(db), "--retry", "bad"]) == 2
    assert "no dead or failed delivery 'bad'" in capsys.readouterr().err
    # handled once retried: no dead letter any more, and the history says what it was
    with Store(db) as store:
        d = q.claim(store, "w")                 # --retry queued it at the real time
        q.complete(store, d.id, "w", "handled")
    assert main(["queue", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "queued=0  processing=0  done=2  failed=0  dead=0  resolved=0  paused=0  dismissed=0"
    assert "    was dead: cannot be handled: no handler for event 'frobnicate'\n    resolved by bad\n" in out


def test_queue_without_database_is_a_clear_error(tmp_path, capsys):
    assert main(["queue", "--db", str(tmp_path / "missing.db")]) == 2
    assert "no database at" in capsys.readouterr().err
