"""Defects found in review of the day's merges (CLI)."""
from __future__ import annotations

import pytest

from bot.agents.redact import forget_secrets, redact
from bot.cli.main import main

WEBHOOK_SECRET = "Zq9Vn3KtLm7Wc2Rb"
TOKEN = "v1.8f3ac2d9e41b7a06"


@pytest.fixture(autouse=True)
def _no_registered_secrets():
    forget_secrets()
    yield
    forget_secrets()


def test_a_der_key_file_does_not_unregister_every_other_secret(tmp_path, monkeypatch, capsys):
    """A deployment's environment names a key file GitHub's .pem was converted to DER (binary),
    beside FORKSYNC_TOKEN and FORKSYNC_WEBHOOK_SECRET, and a person runs any CLI command there
    (``forksync resolve --agent``, ``bench resolve --agent`` …). Seen: the key file's
    NotPemKey is raised inside ``ServeSettings.register_secrets`` before it registers anything,
    and ``register_deployment_secrets`` swallows it, so the token and the webhook secret are
    registered for nothing: they go to the model and into printed errors verbatim. Should be:
    as its docstring says, "register what can be read" — every readable secret is hidden."""
    key = tmp_path / "app.der"
    key.write_bytes(b"\x30\x82\x04\xbd\x02\x01\x00\x30\x0d\x06\x09\x2a\x86\x48\x86\xf7\x0d\x01\x01\x01\xff\xfe")
    monkeypatch.delenv("FORKSYNC_SETTINGS_FILE", raising=False)
    monkeypatch.setenv("FORKSYNC_WEBHOOK_SECRET", WEBHOOK_SECRET)
    monkeypatch.setenv("FORKSYNC_TOKEN", TOKEN)
    monkeypatch.setenv("FORKSYNC_PRIVATE_KEY_FILE", str(key))
    monkeypatch.chdir(tmp_path)
    # any command: main registers the deployment's secrets before it runs it
    main(["status", "--fork", str(tmp_path / "nowhere"), "--upstream", str(tmp_path / "nowhere")])
    capsys.readouterr()
    shown = redact(f"token {TOKEN} and hook {WEBHOOK_SECRET}")
    assert TOKEN not in shown, "FORKSYNC_TOKEN is not hidden"
    assert WEBHOOK_SECRET not in shown, "FORKSYNC_WEBHOOK_SECRET is not hidden"
