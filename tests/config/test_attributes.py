"""The attributes file forksync hands to git in a git dir (bot.config.attributes.git_attributes_file):
a table of inputs and exact outputs."""
from __future__ import annotations

import pytest

from bot.config.attributes import git_attributes_file


@pytest.mark.parametrize("merge,sizes,expected", [
    ({"a.bin": False, "b.txt": None}, None, "/a.bin -merge\n"),
    ({"a.bin": "binary"}, {"a.bin": 7, "docs/g.md": 32}, "/a.bin merge=binary\n/docs/g.md conflict-marker-size=32\n"),
    ({"d/x y.md": True}, {"d/x y.md": 12}, '"/d/x y.md" merge conflict-marker-size=12\n'),
    ({}, {"*.md": 9}, "/\\*.md conflict-marker-size=9\n"),
])
def test_git_attributes_file(merge, sizes, expected):
    assert git_attributes_file(merge, sizes) == expected
