"""The /forksync comment-command parser: exact typed values for every verb, and helpful errors."""
import pytest

from bot.core.commands import L3, CommandError, Decide, Help, Hold, Merge, Pick, Plan, Reconsider, Retest, Signoff, Target, parse_comment, parse_line
from bot.model import Disposition

SHA = "0123456789abcdef0123456789abcdef01234567"


@pytest.mark.parametrize("line,expected", [
    ("/forksync plan", Plan("/forksync plan")),
    ("  /forksync   PLAN  ", Plan("/forksync plan")),
    (f"/forksync pick {SHA.upper()}", Pick(f"/forksync pick {SHA}", Target(sha=SHA))),
    ("/forksync pick #1234", Pick("/forksync pick #1234", Target(pr=1234))),
    ("/forksync defer abc1234 waits for the LLVM bump",
     Decide("/forksync defer abc1234 waits for the LLVM bump", Target(sha="abc1234"),
            Disposition.DEFERRED_BLOCKED, "waits for the LLVM bump")),
    ("/forksync wontport #77 fork has its own scheduler",
     Decide("/forksync wontport #77 fork has its own scheduler", Target(pr=77), Disposition.WONT_PORT,
            "fork has its own scheduler")),
    ("/forksync skip abcdef0 not on this base",
     Decide("/forksync skip abcdef0 not on this base", Target(sha="abcdef0"),
            Disposition.SKIP_FOR_CURRENT_BASE, "not on this base")),
    ("/forksync reconsider #5", Reconsider("/forksync reconsider #5", Target(pr=5))),
    ("/forksync hold", Hold("/forksync hold", on=True)),
    ("/forksync unhold", Hold("/forksync unhold", on=False)),
    ("/forksync retest", Retest("/forksync retest", None)),
    ("/forksync retest L2", Retest("/forksync retest L2", "L2")),
    ("/forksync merge", Merge("/forksync merge")),
    ("/forksync Help", Help("/forksync help")),          # every sync PR body points at it
    ("/forksync\u00a0hold", Hold("/forksync hold", on=True)),       # a no-break space (macOS Option+Space)
    ("/forksync merge\u202f", Merge("/forksync merge")),
    ("/forksync l3 llama-70b", L3("/forksync l3 llama-70b", "llama-70b")),
    ("/forksync signoff amd-backend", Signoff("/forksync signoff amd-backend", "amd-backend")),
])
def test_every_verb_parses_to_its_typed_value(line, expected):
    assert parse_line(line) == expected


@pytest.mark.parametrize("line,message", [
    ("/forksync", "no verb given"),
    ("/forksync frobnicate", "unknown verb 'frobnicate'"),
    # a typo'd verb names the verb it is closest to
    ("/forksync retset", "unknown verb 'retset' (did you mean `/forksync retest`)"),
    ("/forksync sign-off llvm", "unknown verb 'sign-off' (did you mean `/forksync signoff`)"),
    ("/forksync Unhodl", "unknown verb 'Unhodl' (did you mean `/forksync unhold`)"),
    ("/forksync pick", "expected exactly one upstream sha or #PR; usage: `/forksync pick <sha|#PR>`"),
    ("/forksync pick xyz", "'xyz' is neither a commit sha (7-40 hex) nor #PR; usage: `/forksync pick <sha|#PR>`"),
    ("/forksync pick abc12", "'abc12' is neither a commit sha (7-40 hex) nor #PR; usage: `/forksync pick <sha|#PR>`"),
    ("/forksync defer abc1234", "a reason is required; usage: `/forksync defer <sha|#PR> <reason>`"),
    ("/forksync merge now", "`merge` takes no arguments; usage: `/forksync merge`"),
    ("/forksync retest a b", "expected at most one suite name; usage: `/forksync retest [suite]`"),
    ("/forksync l3", "expected exactly one name; usage: `/forksync l3 <workload>`"),
])
def test_malformed_commands_say_what_is_wrong(line, message):
    got = parse_line(line)
    assert isinstance(got, CommandError)
    assert got.message == message


def test_the_prefix_and_verb_in_any_case_are_a_command_with_its_canonical_line():
    assert parse_line("/Forksync hold") == Hold("/forksync hold", on=True)
    assert parse_line("/FORKSYNC Merge") == Merge("/forksync merge")
    assert parse_line("/Forksync") == CommandError("/Forksync", "no verb given")


def test_non_commands_are_not_commands():
    assert parse_line("please /forksync plan") is None
    assert parse_line("/forksyncplan") is None
    assert parse_line("") is None


def test_comment_with_several_commands_quotes_and_code_blocks():
    body = "\n".join([
        "Thanks!",
        "> /forksync merge",
        "```",
        "/forksync hold",
        "```",
        "/forksync retest L1",
        "/forksync retest L1",
        "/forksync bogus",
    ])
    assert parse_comment(body) == [Retest("/forksync retest L1", "L1"),
                                   CommandError("/forksync bogus", "unknown verb 'bogus'")]


def test_verb_property_and_target_text():
    assert parse_line("/forksync pick #9").verb == "pick"
    assert str(Target(sha="abc1234")) == "abc1234"
    assert str(Target(pr=9)) == "#9"


HOLD = [Hold("/forksync hold", on=True)]


@pytest.mark.parametrize("body,expected", [
    ("/forksync hold", HOLD),
    ("Looks stuck.\n/forksync hold\nthanks", HOLD),                  # a line of a paragraph
    ("  /forksync hold", HOLD),                                      # up to 3 spaces: still a paragraph
    ("Please\n    /forksync hold", HOLD),                            # a paragraph continuation line, shown as text
    ("&#47;forksync hold", HOLD),                                    # an entity renders as the same visible text
    ("<!-- x -->/forksync hold", []),                                # a raw HTML block line, not paragraph text
    # indented code block: shown as code, never run
    ("Try:\n\n    /forksync hold", []),
    ("    /forksync hold", []),
    # HTML comments, invisible on GitHub: block and inline, one line or many
    ("<!-- /forksync hold -->", []),
    ("<!--\n/forksync hold\n-->", []),
    ("ok <!--\n/forksync hold\n--> fine", []),
    # fences of any length; a shorter fence line inside does not close the block
    ("````\n```\n/forksync hold\n```\n````", []),
    ("~~~~\n~~~\n/forksync hold\n~~~~", []),
    ("```\n/forksync hold", []),                                     # an unclosed fence runs to the end
    ("`/forksync hold`", []),                                        # inline code
    ("``/forksync hold``", []),
    ("**/forksync hold**", []),
    ("[/forksync hold](https://example.com)", []),
    ("> /forksync hold", []),                                        # quotes, also a lazy continuation line
    ("> I asked for this\n/forksync hold", []),
    ("- /forksync hold", []),                                        # a list item is not a command line
    ("| a |\n|---|\n| /forksync hold |", []),
    ("<details>\n/forksync hold\n</details>", []),                   # an HTML block
])
def test_commands_are_found_only_in_paragraph_text(body, expected):
    assert parse_comment(body) == expected


def test_a_reason_keeps_inline_code_and_a_quote_ends_at_a_blank_line():
    body = "> /forksync merge\n\n/forksync defer abc1234 needs `tl.dot` fixed first"
    [cmd] = parse_comment(body)
    assert cmd.line == "/forksync defer abc1234 needs `tl.dot` fixed first"


def test_the_help_table_has_one_row_per_verb_with_its_usage_and_help():
    """A ``|`` splits a GFM table cell even inside a code span unless written ``\\|``: usages
    such as ``<sha|#PR>`` stay whole in the help reply's table, rendered as GitHub renders it."""
    from markdown_it import MarkdownIt

    from bot.commands.runner import help_rows
    from bot.github.common import render

    rows = help_rows()
    assert len(rows) == 14 and sum("|" in r["usage"] for r in rows) == 6
    for message in ("unknown verb 'bogus'", ""):
        body = render("command_help.md.j2", marker="", user="alice", line="/forksync bogus", message=message, verbs=rows)
        cells, row = [], None
        for t in MarkdownIt("commonmark").enable(["table"]).parse(body):
            if t.type == "tr_open":
                row = []
            elif t.type == "inline" and row is not None:
                row.append(t.content)
            elif t.type == "tr_close":
                cells.append(row)
                row = None
        assert cells[1:] == [[f"`{r['usage']}`", r["help"]] for r in rows]
    assert body.startswith("@alice `/forksync bogus`:\n")


def test_a_reason_keeps_its_links_targets():
    """The reason is recorded for good (``refs/notes/forksync``): a link to the blocking issue keeps
    its URL, an autolink its brackets, an image its source."""
    got = [c.reason for c in parse_comment(
        "/forksync defer abc1234 blocked on [llvm#1234](https://github.com/llvm/llvm-project/issues/1234)\n\n"
        "/forksync skip abcdef0 see <https://x.example/z> and ![plot](https://x.example/p.png)")]
    assert got == ["blocked on [llvm#1234](https://github.com/llvm/llvm-project/issues/1234)",
                   "see <https://x.example/z> and ![plot](https://x.example/p.png)"]
    assert parse_comment("[/forksync hold](https://x.example)") == []
