"""The deterministic conflict rules: tables of conflicts and their exact decisions (pure)."""
from __future__ import annotations

import pytest

from bot.resolve.rules import RULES, Declined, FileConflict, Hunk, Memory, baseline, has_conflict_markers, resolutions_of, resolve_file, split_merge


def merged(*pieces) -> str:
    """diff3 output from clean strings and (ours, base, theirs) tuples."""
    out = []
    for p in pieces:
        if isinstance(p, tuple):
            o, b, t = p
            out.append(f"<<<<<<< fork\n{o}||||||| base\n{b}=======\n{t}>>>>>>> upstream\n")
        else:
            out.append(p)
    return "".join(out)


def fc(**kw) -> FileConflict:
    d = dict(path="src/a.c", base="b\n", ours="o\n", theirs="t\n", merged=None)
    d.update(kw)
    return FileConflict(**d)


ADD = merged("head\n", ("fork_line();\n", "", "upstream_line();\n"), "tail\n")
SAME_BLOCK = merged("head\n", ("x = 1;\nfork();\n", "", "x = 1;\n"), "tail\n")
HAS = merged("a\n", ("new_call(fork_arg);\nmore();\n", "old_call();\n", "new_call(fork_arg);\n"), "z\n")
NOT_HAS = merged("a\n", ("fork_call();\n", "old_call();\n", "new_call();\n"), "z\n")
# the fork took upstream's later rename first; upstream's side is the intermediate name it later replaced
AHEAD = merged("a\n", ("call_v3(x);\n", "call_v1(x);\n", "call_v2(x);\n"), "z\n")
LATEST = "a\ncall_v3(x);\nz\n"
# the fork reformats line 1, upstream edits line 2: adjacent edits of different base lines
ADJ = merged("a\n", ("one(  );\ntwo();\n", "one();\ntwo();\n", "one();\ntwo(arg);\n"), "z\n")
# upstream inserts a block before the line the fork rewrites
INS = merged("a\n", ("fork_line();\n", "old_line();\n", "up_new();\nold_line();\n"), "z\n")
BOTH = merged("a\n", ("fork_line();\n", "old_line();\n", "up_line();\n"), "z\n")
DIV = merged("a\n", ("fork_rewrite();\n", "old_a();\nold_b();\n", "old_b();\n"), "z\n")

CASES = [
    # (rule, conflict, expected text or None for a deletion, or "declines")
    ("fork-keeps", fc(fork_keeps=True, areas=("ci",)), "o\n"),
    ("fork-keeps", fc(fork_keeps=False), "declines"),
    ("fork-keeps", fc(fork_keeps=True, ours=None), None),                 # the fork deleted it: stays deleted
    ("fork-deleted", fc(ours=None, kept_deleted_before=True), None),
    ("fork-deleted", fc(ours=None, kept_deleted_before=False), "declines"),
    ("fork-deleted", fc(ours="o\n", kept_deleted_before=True), "declines"),
    ("upstream-deleted", fc(theirs=None, fork_is_upstream_version=True), None),
    ("upstream-deleted", fc(theirs=None, fork_is_upstream_version=False), "declines"),
    ("upstream-deleted", fc(theirs=None, fork_is_upstream_version=None), "declines"),
    ("upstream-file", fc(fork_is_upstream_version=True), "t\n"),
    ("upstream-file", fc(fork_is_upstream_version=True, divergent=True), "declines"),
    ("upstream-file", fc(fork_is_upstream_version=False), "declines"),
    ("upstream-file", fc(fork_is_upstream_version=None), "declines"),
    ("fork-has-change", fc(merged=HAS), "a\nnew_call(fork_arg);\nmore();\nz\n"),
    ("fork-has-change", fc(merged=NOT_HAS), "declines"),
    ("divergent-hunks", fc(merged=DIV, divergent=True), "a\nfork_rewrite();\nz\n"),
    ("divergent-hunks", fc(merged=DIV, divergent=False), "declines"),
    ("divergent-hunks", fc(merged=NOT_HAS, divergent=True), "declines"),
    ("additive-union", fc(merged=ADD), "head\nfork_line();\nupstream_line();\ntail\n"),
    ("additive-union", fc(merged=SAME_BLOCK), "declines"),     # two versions of one block
    ("additive-union", fc(merged=NOT_HAS), "declines"),        # a base line is replaced
    ("fork-ahead-hunks", fc(merged=AHEAD, latest_upstream=LATEST), "a\ncall_v3(x);\nz\n"),
    ("fork-ahead-hunks", fc(merged=AHEAD, latest_upstream=None), "declines"),          # no later upstream version known
    ("fork-ahead-hunks", fc(merged=AHEAD, latest_upstream="a\ncall_v2(x);\nz\n"), "declines"),  # upstream kept its side
    ("fork-ahead-hunks", fc(merged=AHEAD, latest_upstream="a\nother(x);\nz\n"), "declines"),    # the fork's side is its own
    ("line-merge", fc(merged=ADJ), "a\none(  );\ntwo(arg);\nz\n"),
    ("line-merge", fc(merged=INS), "a\nup_new();\nfork_line();\nz\n"),
    ("line-merge", fc(merged=BOTH), "declines"),        # both sides edit the same base line
    ("line-merge", fc(merged=ADD), "declines"),         # both insert at one place: the order is unknown
    ("rerere", fc(merged=NOT_HAS, earlier={Hunk("fork_call();\n", "old_call();\n", "new_call();\n").fingerprint:
                                           "new_call(); fork_call();\n"}), "a\nnew_call(); fork_call();\nz\n"),
    ("rerere", fc(merged=NOT_HAS, earlier={}), "declines"),
]


@pytest.mark.parametrize("rule,conflict,want", CASES, ids=[f"{r}-{i}" for i, (r, _, _) in enumerate(CASES)])
def test_rule_table(rule, conflict, want):
    d = RULES[rule](conflict)
    if want == "declines":
        assert d is None
        return
    assert d is not None and d.rule == rule and d.text == want and d.deletes == (want is None)
    assert d.action and d.reason


def test_resolve_file_tries_rules_in_order_and_declines_with_their_names():
    c = fc(fork_is_upstream_version=True, fork_keeps=True)
    assert resolve_file(c, ["fork-keeps", "upstream-file"]).rule == "fork-keeps"
    assert resolve_file(c, ["upstream-file", "fork-keeps"]).rule == "upstream-file"
    assert resolve_file(fc(), ["fork-keeps", "upstream-file"]) == Declined(("fork-keeps", "upstream-file"))
    with pytest.raises(KeyError):
        resolve_file(fc(), ["no-such-rule"])
    binary = fc(base=None, ours=None, theirs=None, binary=True, fork_keeps=True)
    assert resolve_file(binary, ["fork-keeps"]) == Declined(("fork-keeps",), "a binary file: no rule reads it")


def test_split_merge_pieces_and_unbalanced_markers():
    assert split_merge(ADD) == ["head\n", Hunk("fork_line();\n", "", "upstream_line();\n"), "tail\n"]
    assert split_merge("a\n=======\nb\n") == ["a\n=======\nb\n"]         # a marker-like line outside a conflict
    assert split_merge("<<<<<<< fork\nx\n=======\n") is None
    assert split_merge("<<<<<<< fork\nx\n||||||| base\n<<<<<<< again\n") is None


def test_hunk_fingerprint_ignores_which_side_is_which():
    assert Hunk("a\n", "b\n", "c\n").fingerprint == Hunk("c\n", "x\n", "a\n").fingerprint
    assert Hunk("a\n", "b\n", "c\n").fingerprint != Hunk("a\n", "b\n", "d\n").fingerprint


def test_baselines():
    c = fc(merged=ADD, ours="O", theirs="T")
    assert baseline("ours", c) == "O" and baseline("theirs", c) == "T"
    assert baseline("union", c) == "head\nfork_line();\nupstream_line();\ntail\n"
    assert baseline("ours-hunks", c) == "head\nfork_line();\ntail\n"
    assert baseline("theirs-hunks", c) == "head\nupstream_line();\ntail\n"
    assert isinstance(baseline("union", fc(merged=None)), Declined)


def test_resolutions_of_records_each_hunk_between_its_anchors():
    m = merged("a\n", ("o1\n", "b1\n", "t1\n"), "mid\n", ("o2\n", "b2\n", "t2\n"), "z\n")
    got = resolutions_of(m, "a\nR1\nmid\nR2a\nR2b\nz\n")
    assert got == {Hunk("o1\n", "b1\n", "t1\n").fingerprint: "R1\n", Hunk("o2\n", "b2\n", "t2\n").fingerprint: "R2a\nR2b\n"}
    assert resolutions_of(m, "a\nR1\nchanged mid\nR2\nz\n") == {}      # edited outside the conflicts: nothing learned
    assert resolutions_of(m, "other start\nmid\nz\n") == {}


def test_memory_learns_only_what_landed():
    m = Memory()
    deleted = fc(path="ci.yml", ours=None)
    m2 = m.learn(deleted, None)
    assert m2.kept_deleted == frozenset({"ci.yml"}) and m.kept_deleted == frozenset()
    assert m2.learn(deleted, "re-added\n").kept_deleted == frozenset({"ci.yml"})
    c = fc(merged=NOT_HAS)
    m3 = m2.learn(c, "a\nR\nz\n")
    assert m3.apply(c).earlier == {Hunk("fork_call();\n", "old_call();\n", "new_call();\n").fingerprint: "R\n"}
    assert m3.apply(deleted).kept_deleted_before is True and m3.apply(c).kept_deleted_before is False


def test_conflict_markers_in_a_landed_file():
    marked = "a\n<<<<<<< HEAD\nfork\n=======\nupstream\n>>>>>>> 1234abc\nb\n"
    assert has_conflict_markers(marked) and has_conflict_markers("<<<<<<<\nx\n>>>>>>>\n")
    assert not has_conflict_markers(None) and not has_conflict_markers("a\n<<<<<<< HEAD\nno end\n")
    assert not has_conflict_markers("<<<<<<<< eight\n>>>>>>>> eight\n") and not has_conflict_markers("x <<<<<<< y\n>>>>>>>\n")
    c = FileConflict("f.c", "b\n", "o\n", "t\n", merged="<<<<<<< fork\no\n||||||| base\nb\n=======\nt\n>>>>>>> upstream\n")
    assert Memory().learn(c, marked).resolutions == {} and Memory().learn(c, "o t\n").resolutions != {}
