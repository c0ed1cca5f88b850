"""L2's git errors go to the regression issue and the status issue: they are scrubbed whole before
they are cut."""
from __future__ import annotations

import subprocess

import pytest

from bot.l2.service import _git


def test_a_token_in_gits_error_is_scrubbed(tmp_path):
    repo = tmp_path / "r.git"
    subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True)
    token = "ghs_" + "Qx7" * 12
    with pytest.raises(RuntimeError) as e:
        _git(repo, "rev-parse", token)
    assert "Qx7Qx7" not in str(e.value) and "failed" in str(e.value)
