"""Texts cut to GitHub's limits (bot.github.limits, pure)."""
from __future__ import annotations

from bot.github.limits import BODY_LIMIT, TITLE_LIMIT, fit_body, fit_title


def test_a_body_within_the_limit_is_kept_and_a_longer_one_is_cut_once_at_a_line():
    short = "a\n" * 100
    assert fit_body(short) == short
    long = "".join(f"| `{i:06d}` | failed |\n" for i in range(5000))       # 100,000 characters
    cut = fit_body(long)
    assert len(cut) <= BODY_LIMIT and cut.startswith(long[:60000])
    head, note = cut.split("\n\n_", 1)
    assert long.startswith(head + "\n") and note.startswith(f"{len(long) - len(head):,} characters were cut here")
    assert fit_body(cut) == cut                  # what GitHub holds, cut again: the same (no rewrite at every refresh)


def test_a_cut_inside_a_code_block_closes_it():
    text = "Log:\n~~~~\n" + "E   assert 1 == 2\n" * 5000
    head = fit_body(text).split("\n\n_", 1)[0]
    assert head.endswith("\n~~~~") and head.count("~~~~") == 2


def test_a_title_is_cut_at_a_word():
    assert fit_title("Sync 3 upstream commits") == "Sync 3 upstream commits"
    title = fit_title("Nightly failure: " + "test_attention_fwd_" * 30)
    assert len(title) <= TITLE_LIMIT and title.endswith("…")
    words = "Nightly " + " ".join(["failure"] * 60)
    assert fit_title(words).endswith("failure…") and len(fit_title(words)) <= TITLE_LIMIT


def test_a_check_run_text_is_cut_to_githubs_limit_in_bytes():
    """GitHub measures a check run's summary and text in bytes (public report github/docs#35252):
    a gate summary of table rows with ✅/❌ marks (3 bytes each in UTF-8) under 65,535 characters
    can still pass 65,535 bytes."""
    from bot.github.limits import CHECK_TEXT_LIMIT, fit_check_text

    rows = "".join(f"| ❌ | `suite-{i:05d}` | — | red on the base too · {'✅' * 4} |\n" for i in range(1150))
    assert len(rows) < CHECK_TEXT_LIMIT < len(rows.encode())
    cut = fit_check_text(rows)
    assert len(cut.encode()) <= CHECK_TEXT_LIMIT and "characters were cut here" in cut
    assert fit_check_text("short ✅\n") == "short ✅\n"
