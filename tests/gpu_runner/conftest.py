"""Fixtures shared by the runner's tests."""
from __future__ import annotations

import pytest

from tests.gpu_runner.test_runner import SQUARE_C, TEST_SQUARE, commit, git


@pytest.fixture
def repo(tmp_path):
    """A fork holding a C program and its three pytest tests, one commit on ``main``."""
    r = tmp_path / "fork"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    commit(r, {"src/square.c": SQUARE_C, "tests/test_square.py": TEST_SQUARE}, "square")
    return r
