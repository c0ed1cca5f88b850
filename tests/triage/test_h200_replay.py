"""The H200 replay's real runner results (``bench/nightly_replay.py``: the reference kernel suite
run by gpu_runner on an H200 with injected faults, in ``tests/data/triage/h200-replay``) through
``forksync triage nightly``, night by night: the exact actions."""
from __future__ import annotations

import json
from pathlib import Path

from bot.cli.main import main
from gpu_runner.result import RunResult

DATA = Path(__file__).resolve().parents[1] / "data" / "triage" / "h200-replay"
NIGHTS = (("nightly-0", "2026-12-01", ("n0-cold.json",)), ("nightly-1", "2026-12-02", ("n1.json", "n1-infra.json")),
          ("nightly-2", "2026-12-03", ("n2.json",)), ("nightly-3", "2026-12-04", ("n3.json",)))
SOFTMAX = "examples/kernels/test_kernels.py::test_softmax"
MATMUL = "examples/kernels/test_kernels.py::test_matmul"


def test_the_runner_results_say_what_happened_on_the_gpu():
    r = {n: RunResult.from_json((DATA / f"{n}.json").read_text()) for n in ("n0-cold", "n1", "n1-infra", "n2", "n3")}
    assert [(n, x.verdict, x.outcome, x.counts.failed + x.counts.error) for n, x in r.items()] == [
        ("n0-cold", "green", "pass", 0), ("n1", "red", "fail", 4), ("n1-infra", "red", "infrastructure", 0),
        ("n2", "red", "fail", 4), ("n3", "green", "pass", 0)]
    infra = r["n1-infra"]
    assert [a.infra_error for a in infra.attempts] == ["gpu-missing: RuntimeError: No CUDA GPUs are available"] * 2
    assert r["n0-cold"].environment.gpu_model == "NVIDIA H200" and r["n0-cold"].triton_cache == "per-runner"


def test_three_nights_through_triage_nightly(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    got = []
    for run, date, files in NIGHTS:
        assert main(["--config", str(DATA / "forksync.yml"), "triage", "nightly", "--db", str(tmp_path / "r.db"),
                     "--run", run, "--date", date, "--repo", "meta/triton", *[str(DATA / f) for f in files]]) == 0
        out = json.loads(capsys.readouterr().out)
        got.append({k: sorted((x.get("issue"), x["class"], x["tests"][0].split("::")[-1], len(x["tests"])) for x in v)
                    for k, v in out.items() if isinstance(v, list) and v})
    bf16, fp16 = ("test_softmax[narrow-bf16]", 2), ("test_softmax[narrow-fp16]", 2)
    smem = ("test_matmul[ragged-128x256x64-g8-w8-s3-fp32]", 2)
    assert got == [
        {},
        {"opened": [(1, "real", *bf16), (2, "real", *fp16)], "infrastructure": [(None, "infrastructure", "job:kernels", 1)]},
        # the fp16 fault closes after its own clean nightly while the bf16 fault still fails in test_softmax
        {"opened": [(3, "real", *smem)], "updated": [(1, "real", *bf16)], "closed": [(2, "real", *fp16)]},
        {"closed": [(1, "real", *bf16), (3, "real", *smem)]},
    ]
    assert main(["triage", "status", "--db", str(tmp_path / "r.db"), "--repo", "meta/triton"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "4 root cause(s) of meta/triton; 4 nightly run(s) processed"


def test_a_nightly_older_than_the_newest_triaged_is_refused(tmp_path, capsys, monkeypatch):
    # a user's trial: nightly-2's reports sent after nightly-1 but dated the day before. Taken, its
    # clean fp16 cases closed the issue nightly-1 had just opened and its matmul fault was
    # "first seen" before nightly-1
    import sqlite3

    monkeypatch.chdir(tmp_path)
    db = tmp_path / "r.db"

    def nightly(run, date, *files):
        return main(["--config", str(DATA / "forksync.yml"), "triage", "nightly", "--db", str(db), "--run", run,
                     "--date", date, "--repo", "meta/triton", *[str(DATA / f) for f in files]])

    assert nightly("nightly-1", "2026-11-02", "n1.json", "n1-infra.json") == 0
    capsys.readouterr()
    before = list(sqlite3.connect(db).iterdump())
    assert nightly("nightly-2", "2026-11-01", "n2.json") == 2
    out, err = capsys.readouterr()
    assert out == "" and err == (
        "forksync: nightly nightly-2 (2026-11-01) is older than nightly-1 (2026-11-02), the newest nightly already "
        "triaged for meta/triton; nothing was written: nightlies are triaged in the order they ran "
        "(replay older ones into a fresh --db)\n")
    assert list(sqlite3.connect(db).iterdump()) == before
    assert main(["triage", "status", "--db", str(db), "--repo", "meta/triton"]) == 0
    rows = {line.split()[0]: line.split()[1:] for line in capsys.readouterr().out.splitlines()[1:-1]}
    assert rows["softmax-fp16-accuracy"][:3] == ["real", "open", "#2"]
    assert {r[-2] for r in rows.values()} == {"2026-11-02"}


def _nightly(tmp_path, run, *files):
    return main(["--config", str(DATA / "forksync.yml"), "triage", "nightly", "--db", str(tmp_path / "f.db"),
                 "--run", run, "--date", "2026-11-02", "--repo", "me/fork", *map(str, files)])


def test_an_empty_or_non_json_report_is_refused_and_the_run_stays_usable(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    html = "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head><body></body></html>\n"
    cases = {
        "empty.json": ("", "the file is empty; expected a runner result JSON (forksync-result/1)"),
        "blank.log": ("\n  \n", "the file holds only whitespace; expected a runner result JSON, JUnit XML, "
                                "lit output or CI log"),
        "garbage.json": ("garbage {\n", "not JSON: it holds plain text (first line 'garbage {'); expected a runner "
                                        "result JSON (forksync-result/1)"),
        "html.json": (html, "not JSON: it holds an HTML page (first line '<!DOCTYPE html>'); expected a runner "
                            "result JSON (forksync-result/1)"),
        "list.json": ("[1, 2]\n", "a JSON array, not an object; expected a runner result JSON (forksync-result/1)"),
        "html.xml": (html, "not JUnit XML: it holds an HTML page (first line '<!DOCTYPE html>'); pass the file "
                           "pytest wrote with --junitxml"),
        "junit.xml": ("step 1 failed\n", "not XML: it holds plain text (first line 'step 1 failed'); expected JUnit "
                                         "XML (the file pytest wrote with --junitxml)"),
    }
    for name, (text, message) in cases.items():
        (tmp_path / name).write_text(text)
        assert _nightly(tmp_path, "n1", tmp_path / name) == 2, name
        out, err = capsys.readouterr()
        assert (out, err) == ("", f"forksync: {tmp_path / name}: {message}\n")
    assert not (tmp_path / "f.db").exists()
    # the run id was not used up: the right report is taken under it
    assert _nightly(tmp_path, "n1", DATA / "n1.json") == 0
    assert json.loads(capsys.readouterr().out)["already_processed"] is False


def test_plain_text_logs_under_any_other_name_stay_job_records(tmp_path, capsys):
    (tmp_path / "build.txt").write_text("garbage {\n")
    assert main(["triage", "extract", str(tmp_path / "build.txt")]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert json.loads(line)["test"] == "job:build"


def test_a_compressed_or_binary_report_is_refused_not_triaged_as_its_bytes(tmp_path, capsys, monkeypatch):
    # a CI's log artifact is often gzip'd (job.log.gz) and a core dump or a wheel may be passed by mistake: read
    # as text, its bytes were one job-level record whose title was its control characters — a real issue after
    # two nightlies
    import gzip
    monkeypatch.chdir(tmp_path)
    log = ("FAILED python/test/unit/language/test_core.py::test_dot - AssertionError: x\n" * 40).encode()
    (tmp_path / "gpu-tests.log.gz").write_bytes(gzip.compress(log, mtime=0))
    (tmp_path / "core.log").write_bytes(bytes(range(256)) * 8)
    (tmp_path / "wheel.log").write_bytes(b"PK\x03\x04" + bytes(400))
    expected = "expected a runner result JSON, JUnit XML, lit output or CI log"
    for name, kind in (("gpu-tests.log.gz", "gzip-compressed data (decompress it first)"),
                       ("core.log", "binary data, not text"),
                       ("wheel.log", "a zip archive (extract the report from it)")):
        assert _nightly(tmp_path, "n1", tmp_path / name) == 2, name
        assert capsys.readouterr() == ("", f"forksync: {tmp_path / name}: not a report: it holds {kind}; {expected}\n")
    assert not (tmp_path / "f.db").exists()
    # a stray NUL in a real log (a terminal's padding) does not make it binary
    (tmp_path / "tty.log").write_text("FAILED python/test/unit/language/test_core.py::test_dot - AssertionError: x\x00\n"
                                      "1 failed, 3 passed\n")
    assert _nightly(tmp_path, "n1", tmp_path / "tty.log") == 0
    assert json.loads(capsys.readouterr().out)["records"] == 1
