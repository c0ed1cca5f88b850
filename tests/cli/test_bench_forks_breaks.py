"""``forksync bench resolve`` as a new user of another fork runs it: no marker configuration, a
fork that merges upstream, a clone that lacks blobs."""
from __future__ import annotations

import json

from bot.cli.main import main
from bot.config.forksync import RESOLVE_RULES
from bot.resolve.bench import BASELINES
from tests.support.merge_history import build_merge_history


def _args(h):
    return ["--fork", str(h.path), "--upstream", str(h.path), "--upstream-ref", "upstream", "--fork-ref", "main"]


def test_a_fork_with_no_resolved_picks_gets_every_score_and_is_told_about_its_merges(tmp_path, monkeypatch, capsys):
    """A fork that syncs by merging, run with the default config (its commits carry none of the
    Triton fork's markers). A user sees four empty tables and nothing saying why, and ``--json``
    has no ``scores`` at all (a script reading the held-out chain's coverage fails with a
    KeyError). They should see that no commit matched ``resolve.picks`` and that the fork's merges
    of upstream are there for ``--merges``; the document should hold every part and strategy with
    zero files."""
    h = build_merge_history(tmp_path / "repo")
    monkeypatch.chdir(tmp_path)
    assert main([*_args(h), "bench", "resolve", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    zero = {"files": 0, "exact": 0, "ws": 0, "wrong": 0, "declined": 0, "precision": None, "coverage": None}
    for part in ("all", "dev", "held-out"):
        assert {name: doc["scores"][part][name]["*"] for name in ("chain", *RESOLVE_RULES, *BASELINES)} == \
            dict.fromkeys(("chain", *RESOLVE_RULES, *BASELINES), zero)
    assert main([*_args(h), "bench", "resolve"]) == 0
    out = capsys.readouterr().out
    assert ("no commit on the first-parent history of main matches resolve.picks (the markers of resolved picks); "
            "the fork has 5 merges of upstream: --merges (or resolve.merges: true) replays them") in out


def test_a_clone_that_lacks_blobs_says_what_was_left_out_and_what_to_do(tmp_path, monkeypatch, capsys):
    """A blob-less clone (``git clone --filter=blob:none``) or a snapshot that lacks blobs. A user
    sees exit 0, "skipped: 3" on the line of merges although only one merge was skipped (the
    others are files whose blobs are missing), no word on stderr, and every missing path on one
    line (95 kB for torch-spyre's blob-less clone: every file of the tree). They should read on
    stderr how many files were left out and what to fetch, the merges' line should count merges,
    and the list of missing files should stay short."""
    h = build_merge_history(tmp_path / "repo")
    h.drop_blob("one\ntwo (upstream)\nthree\n")        # u2's notes.md: m2 and m5 need it
    for text in ("xpu\n", "u3\n", "s1\n"):              # the fork's own file; files m3 and m3b add
        h.drop_blob(text)
    monkeypatch.chdir(tmp_path)
    assert main([*_args(h), "bench", "resolve", "--merges"]) == 0
    out, err = capsys.readouterr()
    first = out.splitlines()[0]
    assert "; skipped: 1 (1 a criss-cross merge" in first
    assert ("forksync: warning: 4 file(s) the replay needs were left out, their blobs missing from the repository "
            "(a partial clone or snapshot?)") in err
    assert "else use a complete clone" in err
    assert ("files missing from the repository, left out of every replay: notes.md, s1.txt, u3.txt and 1 more "
            "(all in --json files_set_aside)") in out
