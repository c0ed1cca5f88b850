"""The conflict agent on conflicts shaped like the Triton fork's own resolved picks, driven
through the local Anthropic server over HTTP: what the model is shown, and what a person reads
when the API turns a request away."""
from __future__ import annotations

from pathlib import Path

from bot.agents.client import AgentClient
from bot.agents.conflict import resolve_pick
from bot.agents.conflict_git import conflict_case
from bot.agents.conflict_rails import relabel, split_merged
from bot.config.merge_file import diff3_text
from bot.fakeanthropic import FakeAnthropic, Reply
from bot.store import Store
from tests.agents.test_conflict import SETTINGS, git, write

BRANCH = "forksync/chain-test"
# the shape of a real pick (Triton's UpdateAsyncWaitCount.cpp): the fork and upstream each edit
# the same call of a function both keep
BASE = ("void update(Operation *op) {\n"
        "  int waitCnt = 0;\n"
        "  builder.create<AsyncWait>(loc, waitCnt);\n"
        "  return;\n"
        "}\n")
FORK = BASE.replace("create<AsyncWait>(loc, waitCnt)", "create<AsyncWait>(loc, waitCnt, /*tlx=*/true)")
UPSTREAM = BASE.replace("create<AsyncWait>(loc, waitCnt)", "create<AsyncWaitOp>(loc, ValueRange{}, waitCnt)")
PATH = "third_party/amd/lib/TritonAMDGPUTransforms/UpdateAsyncWaitCount.cpp"


def _repo(tmp_path: Path) -> tuple[Path, str, str]:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, PATH, BASE)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    git(root, "checkout", "-qb", "upstream")
    write(root, PATH, UPSTREAM)
    git(root, "commit", "-qam", "[AMD] Use AsyncWaitOp with explicit operands (#8123)")
    up = git(root, "rev-parse", "HEAD")
    git(root, "checkout", "-q", "main")
    write(root, PATH, FORK)
    git(root, "commit", "-qam", "[tlx] mark the wait as TLX's")
    fork = git(root, "rev-parse", "HEAD")
    git(root, "branch", BRANCH, fork)
    return root, fork, up


def test_the_model_is_shown_what_the_common_ancestor_had_in_each_conflict_block(tmp_path):
    """A user sees: the live prompt's merge output holds only the fork's and upstream's lines of
    a block (git's default style), so the model cannot tell which side changed what — while
    ``bench resolve --agent`` scores the agent on a diff3 merge output that has the base lines.
    They should see: the live case is the diff3 merge output (``||||||| base`` section), the same
    text the benchmark asks about, so its score says how the live agent does."""
    root, fork, up = _repo(tmp_path)
    case = conflict_case(str(root), fork, up)
    (f,) = case.files
    (block,) = [s for s in split_merged(f.merged) if s.is_conflict]
    assert block.base == "  builder.create<AsyncWait>(loc, waitCnt);\n"
    assert f.merged == relabel(diff3_text(BASE, FORK, UPSTREAM), up)


async def test_a_prompt_the_api_finds_too_long_says_so_to_the_person(tmp_path):
    """A user sees: a pick whose prompt forksync estimated under ``agents.max_prompt_tokens`` (four
    characters a token; C++ and MLIR have more tokens than that) is refused by the API with 400
    "prompt is too long: 212345 tokens > 200000 maximum", and the PR says only "HTTP 400
    invalid_request_error (not retried)". They should see the API's own words, which say what to
    change (a smaller ``agents.max_prompt_tokens`` or ``excerpt_over_lines``)."""
    root, fork, up = _repo(tmp_path)
    case = conflict_case(str(root), fork, up)
    too_long = Reply(status=400, error_type="invalid_request_error",
                     error_message="prompt is too long: 212345 tokens > 200000 maximum")
    async with FakeAnthropic([too_long], api_key="k") as ant:
        async with AgentClient(SETTINGS, Store(), api_key="k", base_url=ant.base_url) as client:
            out = await resolve_pick(client, case, str(root), BRANCH, branch_old=fork)
    assert out.status == "skipped" and out.commit is None
    assert "prompt is too long: 212345 tokens > 200000 maximum" in out.reason
    assert "prompt is too long: 212345 tokens > 200000 maximum" in out.body
