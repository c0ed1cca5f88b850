"""forksync.yml validation: every bad field is named by its path, nothing is half-loaded."""
from __future__ import annotations

from pathlib import Path

import pytest

from bot.config.forksync import ConfigError, load_config, on_default_branch, parse_config, parse_config_text

ROOT = Path(__file__).resolve().parents[2]


def problems(data) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as e:
        parse_config(data, "forksync.yml")
    return e.value.problems


def test_defaults_need_no_file():
    cfg = parse_config(None)
    assert cfg.bundle_size_cap == 50 and cfg.upstream.ref == "main" and cfg.areas == []


@pytest.mark.parametrize("data, path, reason_part", [
    ({"bundle_size_cap": 0}, "bundle_size_cap", "greater than or equal to 1"),
    ({"areas": [{"name": "ws", "paths": "lib/*"}]}, "areas[ws].paths", "valid list"),
    ({"areas": [{"name": "ws", "symbls": ["x"]}]}, "areas[ws].symbls", "unknown key `symbls`; did you mean `symbols`?"),
    ({"areas": [{"name": "ws", "symbols": ["(unclosed"]}]}, "areas[ws].symbols", "not a valid regular expression"),
    ({"areas": [{"name": "a"}, {"name": "a"}]}, "areas", "used twice"),
    ({"provenance": {"trailers": [{"name": "r", "pattern": "Rev: ([0-9a-f]+)"}]}}, "provenance.trailers[r].pattern",
     "named group"),
    ({"github": {"merge_method": "squash"}}, "github.merge_method", "squash is not allowed"),
    ({"suites": [{"name": "k", "level": "L1", "command": "pytest", "min_tests": 1, "areas": ["nope"],
                  "report": {"format": "junit", "path": "r.xml"}}]}, "suites[k].areas", "unknown area 'nope'"),
    ({"resolve": {"rules": ["fork-deleted", "guess"]}}, "resolve.rules", "unknown rule(s) guess; known: rerere,"),
    ({"resolve": {"keep_fork_areas": ["ci"]}}, "resolve.keep_fork_areas", "unknown area 'ci'"),
    # GitHub refuses a label name over 50 characters, and every area is a label on sync PRs
    ({"areas": [{"name": "warp-specialization-for-hopper-and-blackwell-gpus"}]}, "areas[warp-specialization-for-hopper-and-blackwell-gpus].name",
     "its label 'area:warp-specialization-for-hopper-and-blackwell-gpus' has 54 characters; GitHub allows at most 50"),
    ({"github": {"labels": {"area_prefix": "forksync/area-of-the-code-base:"}}, "areas": [{"name": "quantization-mxfp-nvfp4"}]},
     "areas[quantization-mxfp-nvfp4].name", "shorten the area's name or github.labels.area_prefix"),
    ({"triage": {"labels": ["nightly-failure-of-the-triton-fork-on-h100-and-mi300"]}}, "triage.labels[0]",
     "at most 50 characters"),
    ({"resolve": {"picks": {"subject_patterns": ["[RESOLVED"]}}}, "resolve.picks.subject_patterns",
     "not a valid regular expression"),
])
def test_bad_field_is_named_with_its_reason(data, path, reason_part):
    got = problems(data)
    assert any(p == path and reason_part in r for p, r in got), got


def test_resolve_defaults_match_the_triton_fork():
    r = parse_config(None).resolve
    assert r.rules == ["rerere", "fork-deleted", "fork-ahead"] and r.keep_fork_areas == [] and r.picks.trailer == "Resolved-by"
    assert r.picks.subject_patterns == [r"\[RESOLVED\]", r"\[CONFLICTS\]"]


def test_every_problem_is_reported_at_once():
    got = problems({"bundle_size_cap": -1, "cache_dir": 3, "nonsense": True})
    assert {p for p, _ in got} == {"bundle_size_cap", "cache_dir", "nonsense"}


def test_yaml_errors_name_the_line():
    with pytest.raises(ConfigError) as e:
        parse_config_text("areas:\n  - name: [unclosed\n", ".github/forksync.yml")
    assert "line" in str(e.value) and ".github/forksync.yml" in str(e.value)


def test_missing_file_and_overrides(tmp_path):
    with pytest.raises(ConfigError, match=r"the configuration file .*nope\.yml does not exist"):
        load_config(tmp_path / "nope.yml")
    (tmp_path / "forksync.yml").write_text("upstream: {url: up, ref: main}\nfork: {url: fork}\n")
    cfg = load_config(tmp_path / "forksync.yml", {"upstream.ref": "abc1234", "fork.url": None})
    assert cfg.upstream.ref == "abc1234"
    assert cfg.upstream.url == str(tmp_path / "up")           # relative paths resolve against the file
    assert cfg.cache_dir == str(tmp_path / ".forksync-cache")


def test_a_relative_path_given_as_a_flag_is_the_current_directorys(tmp_path, monkeypatch):
    """``--config sub/forksync.yml --fork ../fork`` means ../fork from where the command runs,
    not from sub/ (the file's own relative paths stay the file's)."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "forksync.yml").write_text("upstream: {url: up}\nfork: {url: fork}\n")
    monkeypatch.chdir(tmp_path / "sub")
    cfg = load_config("forksync.yml", {"fork.url": "../fork", "upstream.url": None})
    assert (cfg.fork.url, cfg.upstream.url) == (str(tmp_path / "fork"), str(tmp_path / "sub" / "up"))
    monkeypatch.chdir(tmp_path)
    cfg = load_config("sub/forksync.yml", {"fork.url": "work/fork", "upstream.url": "https://example.invalid/u.git"})
    assert (cfg.fork.url, cfg.upstream.url) == (str(tmp_path / "work" / "fork"), "https://example.invalid/u.git")


def test_shipped_examples_are_valid():
    for p in [ROOT / "examples" / "triton-fork.yml"]:
        load_config(p)




def test_an_areas_compiled_globs_match_what_glob_match_matches():
    """Area.matches_path compiles an area's globs into one regex (the planner asks it about every
    path of every pending commit); it must say what glob_match says for each glob."""
    from bot.config.forksync import Area, glob_match

    area = Area(name="x", paths=["lib/**", "python/triton/*.py", "third_party/tlx/", "**/test_*.py", "a/**/b.txt"])
    paths = ["lib/x.cpp", "lib/a/b/c.cpp", "python/triton/a.py", "python/triton/sub/a.py", "third_party/tlx/x",
             "third_party/tlxx", "test_a.py", "x/y/test_b.py", "a/b.txt", "a/c/d/b.txt", "b.txt", "liba/x"]
    got = [area.matches_path(p) for p in paths]
    assert got == [any(glob_match(p, g) for g in area.paths) for p in paths]
    assert got == [True, True, True, True, True, False, True, True, True, True, False, False]
    assert not Area(name="none").matches_path("lib/x.cpp")


def test_unmatched_area_globs_names_each_glob_no_path_matches():
    from bot.config.forksync import Area, unmatched_area_globs

    areas = [Area(name="core", paths=["lib/**", "include/"]), Area(name="tlx", paths=["third_party/tlx/**", "lbi/*.cpp"]),
             Area(name="ghost", paths=["no/such/**", "cmake/llvm-hash.txt"]), Area(name="symbols-only", symbols=["TLX"])]
    paths = ["lib/a/b.cpp", "include/x.h", "third_party/tlx/t.py", "cmake/llvm-info.json"]
    assert unmatched_area_globs(areas, paths) == [("tlx", ("lbi/*.cpp",)), ("ghost", ("no/such/**", "cmake/llvm-hash.txt"))]
    assert unmatched_area_globs(areas, iter(paths + ["lbi/x.cpp", "no/such/y", "cmake/llvm-hash.txt"])) == []


def test_fork_ref_left_out_is_the_repositorys_default_branch_on_github():
    given = {"fork:\n  url: meta/triton\n": "master", "fork: {}\n": "master", "fork:\n  ref: ''\n": "master",
             "fork:\n  ref: main\n": "main", "fork:\n  ref: fork-main\n": "fork-main", "upstream: {ref: main}\n": "master"}
    assert {t: on_default_branch(parse_config_text(t), "master").fork.ref for t in given} == given
    assert on_default_branch(parse_config_text("fork: {}\n"), "").fork.ref == "main"       # GitHub named none
    assert on_default_branch(load_config(None, {"fork.ref": "zz", "fork.url": "/x"}), "master").fork.ref == "zz"
    assert on_default_branch(load_config(None, {"fork.ref": None, "fork.url": "/x"}), "master").fork.ref == "master"
