"""Config errors a person can act on: the shipped Triton fork config broken the ways people break
it, and the exact lines the CLI prints (file:line:column, key path by name, "did you mean")."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from bot.cli.main import main
from bot.config import locate
from bot.config.forksync import ConfigError, ForksyncConfig, load_config, parse_config_text

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = (ROOT / "examples" / "triton-fork.yml").read_text()


def broken(old: str, new: str, count: int = 1) -> str:
    assert EXAMPLE.count(old) >= count, old
    return EXAMPLE.replace(old, new, count)


# (edit of examples/triton-fork.yml, the lines of the error after its first line)
CASES = [
    pytest.param(broken("    divergent: true", "    divergnt: true"),
                 ["F:41:5: areas[tlx].divergnt: unknown key `divergnt`; did you mean `divergent`?"], id="typo-in-named-area"),
    pytest.param(broken("bundle_size_cap: 50", "bundle_size_capp: 50"),
                 ["F:32:1: bundle_size_capp: unknown key `bundle_size_capp`; did you mean `bundle_size_cap`?"], id="typo-top-level"),
    pytest.param(broken("    requires_l3: true", "    sign_off: true"),
                 ["F:82:5: areas[llvm-pin].sign_off: unknown key `sign_off`; known keys here: divergent, name, owners, paths, "
                  "requires_l3, symbols"], id="unknown-key-no-close-match"),
    pytest.param(broken("    symbols: ['WarpSpecializ',", "    symbols: ['(WarpSpecializ',"),
                 ["F:49:14: areas[autows].symbols: symbol pattern '(WarpSpecializ' is not a valid regular expression: "
                  "missing ), unterminated subpattern at position 0"], id="bad-regex-in-named-area"),
    # as written in the file (YAML's single quotes keep a backslash as it is), so a search finds it
    pytest.param(broken("    symbols: ['WarpSpecializ',", "    symbols: ['(?i)\\bWarpSpecializ(',"),
                 ["F:49:14: areas[autows].symbols: symbol pattern '(?i)\\bWarpSpecializ(' is not a valid regular "
                  "expression: missing ), unterminated subpattern at position 19"], id="bad-regex-with-backslash"),
    pytest.param(broken("    divergent: true\n  - name: autows", "    divergent: maybe\n  - name: autows"),
                 ["F:41:16: areas[tlx].divergent: Input should be a valid boolean, unable to interpret input"], id="bad-bool"),
    pytest.param(broken("      pattern: '^Reactor Backport Revision:\\s*(?P<sha>[0-9a-f]{7,40})'",
                        "      pattern: '^Reactor Backport Revision:\\s*([0-9a-f]{7,40})'"),
                 ["F:16:16: provenance.trailers[reactor-backport].pattern: the pattern needs a named group (?P<sha>…) "
                  "for the upstream sha"], id="trailer-by-name"),
    # the ledger's own patterns: a bad one was a traceback from the analysis thread (exit 1)
    pytest.param(broken("(?:triton-lang/triton)?#(\\d{3,6})\\b'", "(?:triton-lang/triton)?#(\\d{3,6}\\b'"),
                 ["F:25:24: provenance.pr_citation_pattern: pattern '(?<![\\w/])(?:triton-lang/triton)?#(\\d{3,6}\\b' is not a "
                  "valid regular expression: missing ), unterminated subpattern at position 34"], id="bad-citation-regex"),
    pytest.param(broken("#(\\d{3,6})\\b'", "#\\d{3,6}\\b'"),
                 ["F:25:24: provenance.pr_citation_pattern: pattern '(?<![\\w/])(?:triton-lang/triton)?#\\d{3,6}\\b' needs a "
                  "group (…) capturing the PR number"], id="citation-without-group"),
    pytest.param(broken("'(?i)\\[pick\\]'", "'(?i)[pick\\]'"),
                 ["F:26:17: provenance.pick_markers: pattern '(?i)[pick\\]' is not a valid regular expression: "
                  "unterminated character set at position 4"], id="bad-pick-marker"),
    pytest.param(broken("message_patterns: []", "message_patterns: ['Urgent: (']"),
                 ["F:29:21: isolated_picks.message_patterns: pattern 'Urgent: (' is not a valid regular expression: "
                  "missing ), unterminated subpattern at position 8"], id="bad-urgent-pattern"),
    pytest.param(broken("  - name: ci ", "  - paths: [x]\n  - name: ci "),
                 ["F:83:5: areas[8].name: Field required"], id="item-without-name-by-index"),
    pytest.param(broken("bundle_size_cap: 50", "bundle_size_cap: 50\nbundle_size_cap: 60"),
                 ["F:33:1: bundle_size_cap: key `bundle_size_cap` is given twice (first on line 32); the second one would "
                  "silently win"], id="duplicate-key"),
    pytest.param(broken('    paths: ["third_party/proton/**"]', '    paths: ["third_party/proton/**"'),
                 ["F:80:3: not valid YAML: expected ',' or ']', but got '-' (while parsing a flow sequence that starts on "
                  "line 79, column 12)",
                  '       79 |     paths: ["third_party/proton/**"',
                  "          |            ^",
                  "       80 |   - name: llvm-pin                  # the LLVM version pin: a bump needs an L3 sign-off",
                  "          |   ^"], id="syntax-unclosed-list"),
    pytest.param(broken("bundle_size_cap: 50", "bundle_size_cap: 50\n\tchain_size_cap: 5"),
                 ["F:33:1: not valid YAML: found character '\\t' that cannot start any token (while scanning for the next "
                  "token)",
                  "       33 | \tchain_size_cap: 5",
                  "          | ^"], id="syntax-tab"),
    pytest.param("- just\n- a list\n", ["F:1:1: the top level must be a mapping, not list"], id="not-a-mapping"),
    # one glob where a list is wanted: say how a YAML list is written
    pytest.param(broken('    paths: ["third_party/proton/**"]', "    paths: third_party/proton/**"),
                 ["F:79:12: areas[proton].paths: Input should be a valid list: write `[a, b]`, or one `- a` per line "
                  "below the key"], id="a-string-for-a-list"),
]


@pytest.mark.parametrize("text, lines", CASES)
def test_a_broken_config_names_file_line_column_and_key(tmp_path, text, lines):
    f = tmp_path / "forksync.yml"
    f.write_text(text)
    with pytest.raises(ConfigError) as e:
        load_config(f)
    assert str(e.value).splitlines() == [f"invalid forksync configuration in {f}:"] + \
        [("  " + ln.replace("F:", f"{f}:", 1)) if ln.startswith("F:") else ln for ln in lines]
    assert "<unicode string>" not in str(e.value)


def test_text_read_through_the_api_names_its_source():
    with pytest.raises(ConfigError) as e:
        parse_config_text(broken("    divergent: true", "    divergnt: true"), ".github/forksync.yml@main")
    assert e.value.problems[0] == ("areas[tlx].divergnt", "unknown key `divergnt`; did you mean `divergent`?")
    assert e.value.positions[0] == (41, 5)
    assert e.value.lines()[0] == "  .github/forksync.yml@main:41:5: areas[tlx].divergnt: unknown key `divergnt`; " \
                                 "did you mean `divergent`?"


def test_every_problem_at_once_in_file_order(tmp_path):
    text = broken("    divergent: true", "    divergnt: true", 2).replace("bundle_size_cap: 50", "bundle_size_cap: 0")
    with pytest.raises(ConfigError) as e:
        parse_config_text(text, "f.yml")
    assert [(p, pos) for (p, _), pos in zip(e.value.problems, e.value.positions)] == [
        ("bundle_size_cap", (32, 18)), ("areas[tlx].divergnt", (41, 5)), ("areas[autows].divergnt", (50, 5))]


def test_the_cli_prints_it_and_exits_2(tmp_path, capsys):
    f = tmp_path / "forksync.yml"
    f.write_text(broken("    divergent: true", "    divergnt: true"))
    assert main(["--config", str(f), "status"]) == 2
    assert capsys.readouterr().err == (f"forksync: invalid forksync configuration in {f}:\n"
                                       f"  {f}:41:5: areas[tlx].divergnt: unknown key `divergnt`; did you mean `divergent`?\n")


@pytest.mark.parametrize("loc, want", [
    (("areas", 0, "divergent"), "areas[a].divergent"),
    (("areas", 1, "paths", 0), "areas[1].paths[0]"),
    (("areas", 5), "areas[5]"),
    (("bundle_size_cap",), "bundle_size_cap"),
    ((), ""),
])
def test_named_path(loc, want):
    assert locate.named_path({"areas": [{"name": "a"}, {"paths": ["x"]}]}, loc) == want


@pytest.mark.parametrize("loc, model", [
    (("areas", 0), "Area"), (("provenance", "trailers", 3), "TrailerRule"), (("suites", 0, "report"), "ReportSpec"),
    (("agents",), "AgentSettings"), (("suites", 0, "env"), None), ((), "ForksyncConfig"),
])
def test_model_at_follows_lists_and_sections(loc, model):
    got = locate.model_at(ForksyncConfig, loc)
    assert (got.__name__ if got else None) == model


def test_position_of_a_missing_key_is_its_mapping():
    root = locate.compose("a:\n  b: 1\n")
    assert locate.position(root, ("a", "c")) == (2, 3) and locate.position(root, ("a", "b")) == (2, 6)
    assert locate.position(root, ("a", "b"), key=True) == (2, 3) and locate.position(None, ("a",)) is None
    assert isinstance(locate.node_at(root, ()), yaml.MappingNode)
