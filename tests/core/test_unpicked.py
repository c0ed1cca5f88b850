"""Which upstream commits a list of fork commit messages picks, read as the ledger reads picks
(bot.core.provenance.unpicked: used by the gate's ``picks-missing`` and the squash notice)."""
from __future__ import annotations

from bot.config.forksync import ProvenanceRules, TrailerRule
from bot.core.provenance import picks_named, unpicked

A, B, C = "a" * 40, "b" * 40, "c" * 40


def test_each_pick_form_the_ledger_counts_names_its_commit():
    rules = ProvenanceRules(trailers=[TrailerRule(name="reactor", pattern=r"^Reactor Cherry-pick Revision:\s*(?P<sha>[0-9a-f]{7,40})")])
    messages = [f"pick a\n\nUpstream-Commit: {A}\n",
                f"pick b by hand\n\n(cherry picked from commit {B})\n",
                f"pick c\n\nReactor Cherry-pick Revision: {C[:9]}\n"]
    assert unpicked([A, B, C], messages, rules) == []


def test_a_commit_named_only_by_a_revert_a_pr_number_or_not_at_all_is_unpicked():
    messages = [f'Revert "x"\n\nThis reverts commit {A}.\n', "Speed up b (#101)\n", "unrelated\n"]
    assert unpicked([A, B, C], messages, ProvenanceRules()) == [A, B, C]


def test_a_configured_trailer_counts_only_under_the_forks_own_rules():
    messages = [f"pick c\n\nReactor Cherry-pick Revision: {C[:9]}\n"]
    assert unpicked([C], messages, ProvenanceRules()) == [C]


def test_a_commit_naming_several_picks_is_a_squash_of_them():
    """picks_named (the gate's ``picks-squashed``): a squashed commit keeps every pick's trailer."""
    squash = f"pick a\n\nUpstream-Commit: {A}\n\npick b\n\n(cherry picked from commit {B[:9]})\n"
    assert picks_named([A, B, C], squash, ProvenanceRules()) == [A, B]
    assert picks_named([A, B, C], f"pick c\n\nUpstream-Commit: {C}\n", ProvenanceRules()) == [C]
