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


async def test_a_secret_where_the_error_is_cut_is_removed_whole(tmp_path):
    # git's stderr is kept to a length: scrubbed first, then cut — cut first, the part of the token
    # before the cut was no longer the token, and it stayed in the stored error
    svc = SyncService(workdir=tmp_path, git_url="")
    d = await svc.ensure_repo("meta/triton")
    token = "ghs_" + "T0k3nCanary" * 4
    # git says: fatal: ambiguous argument '<arg>': ... — the token begins 20 characters before the cut
    head = "fatal: ambiguous argument '"
    path = "/".join(["x" * 99] * 5)[:500 - len(head) - 21] + "/"
    arg = path + token
    with pytest.raises(SyncError) as e:
        await svc._git(d, "rev-parse", arg, secrets=[token])
    assert "ambiguous argument" in str(e.value)
    assert token[:20] not in str(e.value)
