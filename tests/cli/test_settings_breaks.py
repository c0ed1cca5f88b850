"""serve/worker settings given the way people give them: secrets as files, a clone URL template.
A bad value must be one line naming the setting (exit 2) at start-up — not a traceback, and not
a worker that starts and then fails every delivery."""
from __future__ import annotations

import argparse

import pytest

from bot.cli.main import UserError, main
from bot.cli.serve import ServeSettings, settings_from


def ns(**kw):
    return argparse.Namespace(**{"no_poll": False, "settings": None, **kw})


def test_a_webhook_secret_file_that_is_not_text_is_named(tmp_path, monkeypatch, capsys):
    """``FORKSYNC_WEBHOOK_SECRET_FILE`` naming a file of random bytes (``head -c 32 /dev/urandom
    > secret``, a common way to make a secret): ``forksync worker`` dies with a
    UnicodeDecodeError traceback (exit 1) from settings_from. A setting it cannot read should be
    one line naming FORKSYNC_WEBHOOK_SECRET_FILE (as an unreadable one already is), exit 2."""
    secret = tmp_path / "secret"
    secret.write_bytes(bytes(range(256)))
    monkeypatch.chdir(tmp_path)
    for k in ("FORKSYNC_SETTINGS_FILE", "FORKSYNC_WEBHOOK_SECRET", "FORKSYNC_TOKEN", "FORKSYNC_APP_ID"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("FORKSYNC_WEBHOOK_SECRET_FILE", str(secret))
    rc = main(["worker", "--db", str(tmp_path / "forksync.db")])
    err = capsys.readouterr().err
    assert rc == 2
    assert "FORKSYNC_WEBHOOK_SECRET_FILE" in err


def test_a_private_key_file_that_is_not_pem_text_is_named(tmp_path):
    """``FORKSYNC_PRIVATE_KEY_FILE`` naming the key converted to DER (binary): serve and worker
    die in ``register_secrets`` with a UnicodeDecodeError traceback. It should be a UserError
    naming FORKSYNC_PRIVATE_KEY_FILE and saying it is not a PEM (text) key."""
    der = tmp_path / "app.der"
    der.write_bytes(b"\x30\x82\x04\xa4\x02\x01\x00\x02\x82\x01\x01\x00\xc3\xff\xfe" + bytes(range(128, 256)))
    s = ServeSettings(app_id="1", private_key_file=str(der))
    with pytest.raises(UserError) as e:
        s.register_secrets()
    assert "FORKSYNC_PRIVATE_KEY_FILE" in str(e.value) or str(der) in str(e.value)


@pytest.mark.parametrize("git_url", [
    "https://github.com/{org}/{repo}.git",          # a placeholder it does not fill: KeyError at every fetch
    "https://github.com/myorg/triton.git",          # no placeholder: every repository is this one
])
def test_a_git_url_template_without_owner_and_repo_is_refused(git_url):
    """``FORKSYNC_GIT_URL`` is "clone URL template with {owner} {repo}". Given with a misspelt
    placeholder it is accepted, and every sync then fails with ``KeyError: 'org'`` in
    SyncService.remote_url; given as one repository's URL (no placeholder) it is accepted and
    every fork — and an upstream named ``owner/name`` (SyncService._upstream_url) — is fetched
    from that one URL: forks mixed up, or a fork compared with itself.
    It should be refused at start-up, naming FORKSYNC_GIT_URL and the placeholders it needs."""
    with pytest.raises(UserError) as e:
        settings_from(ns(), {"FORKSYNC_GIT_URL": git_url})
    assert "FORKSYNC_GIT_URL" in str(e.value)
