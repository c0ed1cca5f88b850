"""Reports that are text a nightly must read (a UTF-16 log, a log in a Windows code page, a JUnit XML with a
byte-order mark), and a credential in a URL on a log's last line, which must reach no title."""
from __future__ import annotations

import json

from bot.triage.group import Group
from bot.triage.signature import signature_of
from tests.triage.test_h200_replay import _nightly

FAILED = "FAILED python/test/unit/language/test_core.py::test_dot - AssertionError: x\n"


def test_a_utf16_log_is_read_as_text_not_refused_as_binary_data(tmp_path, capsys, monkeypatch):
    # Windows PowerShell 5.1's `pytest ... > gpu-tests.log` (Out-File's default) writes UTF-16LE with a BOM:
    # every ASCII character is followed by a NUL, which the binary check counts as half the text
    monkeypatch.chdir(tmp_path)
    (tmp_path / "gpu-tests.log").write_bytes(("\ufeff" + FAILED + "1 failed, 3 passed\n").encode("utf-16-le"))
    assert _nightly(tmp_path, "n1", tmp_path / "gpu-tests.log") == 0, capsys.readouterr().err
    assert json.loads(capsys.readouterr().out)["records"] == 1


def test_a_build_log_in_a_windows_code_page_is_triaged_not_refused_as_binary_data(tmp_path, capsys, monkeypatch):
    # MSBuild and cl.exe on a Chinese Windows runner write their messages in code page 936 (GBK); read as
    # UTF-8 with replacement each Chinese character is one or two U+FFFD, far above one character in ten.
    # Before the binary check this log was one job record ("fatal error C1083 ...", its ASCII intact)
    monkeypatch.chdir(tmp_path)
    log = ("  正在生成代码...\n"
           "  正在编译...\n"
           "  triton.cc\n"
           "C:\\a\\triton\\python\\src\\main.cc(12,10): fatal error C1083: 无法打开包括文件: “Python.h”: "
           "No such file or directory [C:\\a\\triton\\build\\triton.vcxproj]\n"
           "已完成生成项目“C:\\a\\triton\\build\\triton.vcxproj”的操作 - 失败。\n"
           "生成失败。\n")
    (tmp_path / "build.log").write_bytes(log.encode("gbk"))
    assert _nightly(tmp_path, "n1", tmp_path / "build.log") == 0, capsys.readouterr().err
    assert json.loads(capsys.readouterr().out)["records"] == 1


def test_a_junit_xml_with_a_byte_order_mark_is_read(tmp_path, capsys, monkeypatch):
    # .NET's and PowerShell's XML writers (and Excel-edited reports) start the file with a UTF-8 BOM, which
    # XML allows (XML 1.0 §4.3.3); Path.read_text keeps it as U+FEFF, so the file "holds plain text"
    monkeypatch.chdir(tmp_path)
    xml = ('<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="1" '
           'skipped="0" tests="1"><testcase classname="python.test.unit.language.test_core" name="test_dot">'
           '<failure message="AssertionError: x">AssertionError: x</failure></testcase></testsuite></testsuites>\n')
    (tmp_path / "junit.xml").write_bytes(xml.encode("utf-8-sig"))
    assert _nightly(tmp_path, "n1", tmp_path / "junit.xml") == 0, capsys.readouterr().err
    assert json.loads(capsys.readouterr().out)["records"] == 1


def test_a_token_in_the_url_of_an_unrecognised_last_line_reaches_no_title():
    # git's own words when a job's clone or push is refused; the URL carries the installation token a CI
    # put there (`git clone https://x-access-token:$TOKEN@github.com/...`). The key masks the URL, but the
    # raw line (the title and signature row) was not redacted on this path, as it is for an
    # extractor's line
    text = ("Cloning into 'triton'...\n"
            "remote: Invalid username or password.\n"
            "fatal: Authentication failed for "
            "'https://x-access-token:ghs_16C7e42F292c6912E7710c838347Ae178B4a@github.com/me/triton.git/'\n")
    sig = signature_of(text)
    assert "ghs_16C7e42F292c6912E7710c838347Ae178B4a" not in sig.raw
    assert "ghs_16C7e42F292c6912E7710c838347Ae178B4a" not in Group("sig-1", "real", sig, None).title


T = "python/test/unit/language/test_core.py::test_dot"


def test_a_summary_line_without_a_message_does_not_take_pytest_q_stats_line_for_one():
    # `pytest -q` ends with its counts and time on a line of their own, no `===` rule around them; a test that
    # raised a bare AssertionError is `FAILED <test> - AssertionError` there (no colon, no message). The
    # summary line's message was read from the next line: the counts and the run's time became the identity,
    # a new issue each nightly and never the failure section's (`E       AssertionError`, the same fault)
    section = ("    def test_dot():\n>       raise AssertionError\nE       AssertionError\n\n"
               "python/test/unit/language/test_core.py:12: AssertionError\n")
    want = signature_of(section, T).key
    assert want == f"AssertionError||{T}"
    assert signature_of(f"FAILED {T} - AssertionError\n1 failed, 3 passed in 0.52s\n", T).key == want
    assert signature_of(f"FAILED {T} - AssertionError\n1 failed, 3 passed in 7.91s\n", T).key == want
    # `-rfs` lists the skips after the failures: a skip's reason is no message of the failure either
    assert signature_of(f"FAILED {T} - AssertionError\n"
                        "SKIPPED [1] python/test/unit/language/test_core.py:40: requires CUDA 12\n", T).key == want


def test_a_password_in_the_url_of_an_http_status_under_an_unrecognised_last_line_reaches_no_title():
    # uv's failed download, its last line a step's own words: the status under it names the service (key
    # right: "HTTP 5xx Server Error from example.com"), but its raw line, the title, kept the password
    text = ("error: Failed to download `torch==2.5.0`\n"
            "  Caused by: HTTP status server error (500 Internal Server Error) for url "
            "(https://ci-bot:s3cretPassw0rd@download.example.com/whl/torch-2.5.0.whl)\n"
            "finished step 4\n")
    sig = signature_of(text)
    assert sig.key == "HTTPError|HTTP 5xx Server Error from example.com"
    assert "s3cretPassw0rd" not in sig.raw
    assert "s3cretPassw0rd" not in Group("sig-1", "real", sig, None).title


def test_a_summary_line_whose_message_starts_below_does_not_read_pytest_x_stop_or_the_raw_runners_close():
    # the message of `FAILED <test> - AssertionError: ` (numpy's assert_allclose) is read from the next line
    # when the log has no failure section (`--tb=no`, a cut log); `pytest -x` prints its
    # `!!! stopping after 1 failures !!!` right there, and a GitHub Actions log as downloaded ends with
    # `##[error]Process completed with exit code 1.` (`Error: ` is only how the web page shows it). Neither is
    # the failure's message: the identity must be the one a summary line with no message below it gets
    want = signature_of(f"FAILED {T} - AssertionError: \n==== 1 failed in 0.50s ====\n", T).key
    assert want == f"AssertionError||{T}"
    stop = "!!!!!!!!!!!!!!!!!!!!!!!!!! stopping after 1 failures !!!!!!!!!!!!!!!!!!!!!!!!!!!\n"
    assert signature_of(f"FAILED {T} - AssertionError: \n{stop}==== 1 failed in 0.50s ====\n", T).key == want
    assert signature_of(f"FAILED {T} - AssertionError: \n##[error]Process completed with exit code 1.\n", T).key == want


def test_a_token_in_an_unrecognised_last_line_reaches_neither_the_key_nor_the_suggested_rule():
    # the Unknown fallback redacts the raw line (the title) but its identity and `line` are the masked line,
    # which masks numbers and URLs' credentials only: a bare token on the last line ("Authorization: Bearer
    # ghp_…", "HF_TOKEN=hf_…") reached the signature key, the issue's signature row and the suggested rule
    from bot.triage.rules import suggest_rule

    token = "ghs_16C7e42F292c6912E7710c838347Ae178B4a"     # GitHub's documented example token
    s = signature_of(f"step 1\ncurl -H 'Authorization: Bearer {token}' refused the upload\n", T)
    assert token not in s.raw
    assert (token in s.key, token in repr(s), token in repr(suggest_rule(s))) == (False, False, False)


def test_a_utf16_junit_xml_that_declares_its_encoding_is_read(tmp_path, capsys, monkeypatch):
    # .NET's XmlWriter over a StringWriter declares encoding="utf-16", and Windows PowerShell 5.1's `>` saves it
    # as UTF-16LE with a BOM: the report is decoded by its BOM, then handed to the XML parser re-encoded as
    # UTF-8 under a declaration that still says utf-16 ("encoding specified in XML declaration is incorrect")
    monkeypatch.chdir(tmp_path)
    xml = ('<?xml version="1.0" encoding="utf-16"?><testsuites><testsuite name="pytest" errors="0" failures="1" '
           'skipped="0" tests="1"><testcase classname="python.test.unit.language.test_core" name="test_dot">'
           '<failure message="AssertionError: x">AssertionError: x</failure></testcase></testsuite></testsuites>\n')
    (tmp_path / "junit.xml").write_bytes(xml.encode("utf-16"))
    assert _nightly(tmp_path, "n1", tmp_path / "junit.xml") == 0, capsys.readouterr().err
    assert json.loads(capsys.readouterr().out)["records"] == 1


def test_a_gtest_junit_case_keeps_its_suite_and_name_as_its_test_id():
    # googletest's --gtest_output=xml writes classname="<Suite>" name="<Test>" (no module path): the id was
    # ".py::Foo::Bar", a path made of nothing, as if the suite were a pytest class in a module named ""
    from bot.triage.records import from_junit

    xml = ('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites tests="1" failures="1" name="AllTests">\n'
           '<testsuite name="Foo" tests="1" failures="1"><testcase name="Bar" file="t.cc" line="3" status="run" '
           'result="completed" classname="Foo"><failure message="t.cc:5&#x0A;Expected equality" type="">'
           '<![CDATA[t.cc:5\nExpected equality of these values:\n  1\n  2]]></failure></testcase></testsuite>\n'
           '</testsuites>\n')
    (test,) = [r.test for r in from_junit(xml)]
    assert (test.startswith(".py"), "Foo" in test, test.endswith("Bar")) == (False, True, True), test
