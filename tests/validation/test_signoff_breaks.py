"""Sign-offs the gate must not count, on the real SQLite store."""
from __future__ import annotations

import pytest

from bot.store import Store
from bot.validation.gate import AreaPolicy, PRState, SignOff, decide
from bot.validation.signoff import SignoffError, record_signoff, signoffs_for

H = "h" * 40
OWNERS = ("alice", "perf-ci[bot]")


@pytest.fixture
def db(tmp_path):
    with Store(tmp_path / "forksync.db") as s:
        yield s


def test_an_app_bot_listed_among_the_owners_cannot_sign_off(db):
    """An area's owners list an App's bot account beside a person (say the team's perf automation,
    ``perf-ci[bot]``). A sign-off is a person's word that they read the L3 result, as an approval
    is a person's review, and the gate already refuses an App bot's approval. What a person sees
    today: ``/forksync signoff llvm-pin`` from ``perf-ci[bot]`` is recorded and the gate lets the PR
    merge on it ("L3 sign-off by perf-ci[bot]"). What they should see: it is refused with a
    message saying an App's bot account cannot sign off, and the gate still waits for alice."""
    with pytest.raises(SignoffError, match=r"App's bot account"):
        record_signoff(db, "o/fork", 7, H, "llvm-pin", "perf-ci[bot]", OWNERS, time=300, comment_url="u")
    assert signoffs_for(db, "o/fork", 7) == ()
    pr = PRState(number=7, head_sha=H, base_sha="b" * 40, head_contains_base=True, areas=("llvm-pin",),
                 signoffs=(SignOff("llvm-pin", "Perf-CI[bot]", 300),), unit_updated_at=100)
    d = decide(pr, (), (AreaPolicy("llvm-pin", OWNERS, requires_l3=True),))
    assert not any(f.code == "signed-off" for f in d.passed)
    assert [f.detail for f in d.blocking if f.code == "l3-signoff-missing"] == [
        "needs `/forksync signoff llvm-pin` from one of: alice"]
