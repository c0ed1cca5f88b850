"""What a failing git command of the sync service says: GitHub bodies (status issue, blocked
units, PR comments) and stored errors quote it, so no credential of the remote may be in it."""
from types import SimpleNamespace

import pytest

from bot.sync.service import SyncError, SyncService

CANARY_PW = "CANARY-gitpw-9b1e77d0"


async def test_a_failed_push_names_no_password_of_the_clone_url(tmp_path):
    # a clone URL with credentials of its own (FORKSYNC_GIT_URL) is used as is when there is no
    # installation token to put in its place; git's argv (push -q URL) is quoted in the error
    svc = SyncService(workdir=tmp_path, git_url=f"http://canary-user:{CANARY_PW}@127.0.0.1:9/{{owner}}/{{repo}}.git")
    ctx = SimpleNamespace(installation_id=None)
    with pytest.raises(SyncError) as e:
        await svc.record_decisions(ctx, "meta/triton", [], None, "", "alice")
    assert "git push" in str(e.value)
    assert CANARY_PW not in str(e.value) and "canary-user" not in str(e.value)
