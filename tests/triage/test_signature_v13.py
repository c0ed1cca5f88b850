"""Signature version 13: pytest-timeout's outcome, read on nightly texts the rules were not tuned on.

pytest-timeout (the fork's CI runs ``pytest --timeout=300``) ends a test that ran past its limit with
pytest's own ``Failed: Timeout (>300.0s) from pytest-timeout.`` (2.2 and later; ``Failed: Timeout >300.0s``
before), after dumping every thread's stack between ``+++ Timeout +++`` banners. A hang is the test's own
fault: one identity per test, as ``DID NOT RAISE`` is, whichever shape of report carries it — the failure
section of a raw log or a JUnit XML, or the short summary's ``FAILED t - Failed: Timeout …`` line. Before,
the failure section had no extractor (type ``Unknown``, its last line: a stack banner when the dump came
last) and the summary line had one that left the test out, so two tests that hung at different places
were one root cause and one test's hang was two issues (raw log and JUnit of one nightly).

An HTTP status's host is the URL's host without its user info (``user:token@host``), and a pytest summary
line's message that starts on the next line is read there."""
from __future__ import annotations

from bot.triage.records import from_junit, from_log
from bot.triage.signature import SIGNATURE_VERSION, signature_of

T1 = "python/test/unit/language/test_core.py::test_scan2d"
T2 = "python/test/unit/language/test_core.py::test_reduce_layouts"

# the thread method's dump, then pytest's outcome line (pytest-timeout 2.3, pytest 8)
SECTION = ("+++++++++++++++++++++++++++++++++++ Timeout ++++++++++++++++++++++++++++++++++++\n"
           "~~~~~~~~~~~~~~~~~~~~~ Stack of MainThread (140201113241600) ~~~~~~~~~~~~~~~~~~~~~\n"
           '  File "/usr/lib/python3.12/threading.py", line 324, in wait\n'
           "    gotit = waiter.acquire(True, timeout)\n"
           "+++++++++++++++++++++++++++++++++++ Timeout ++++++++++++++++++++++++++++++++++++\n"
           "E       Failed: Timeout (>300.0s) from pytest-timeout.")
KEY = "Failed|Timeout (>300.0s) from pytest-timeout|"


def test_the_version_names_these_rules():
    assert SIGNATURE_VERSION == 13


def test_a_timeout_is_the_tests_own_fault_in_its_failure_section_and_its_summary_line():
    assert signature_of(SECTION, T1).key == KEY + T1
    assert signature_of(f"FAILED {T1}[cumsum-float32-1] - Failed: Timeout (>300.0s) from pytest-timeout.", T1).key \
        == KEY + T1
    # the dump after the outcome line (the signal method prints it first, a JUnit's system-err last) is no title
    s = signature_of("E       Failed: Timeout (>300.0s) from pytest-timeout.\n" + SECTION.rsplit("\n", 1)[0], T1)
    assert (s.key, s.raw) == (KEY + T1, "Timeout (>300.0s) from pytest-timeout")
    # pytest-timeout before 2.2 said it without parentheses: the same fault
    assert signature_of("E   Failed: Timeout >300.0s", T1).key == KEY + T1
    assert signature_of(f"FAILED {T1} - Failed: Timeout >300.0s", T1).key == KEY + T1


def test_two_tests_that_hung_are_two_root_causes_and_one_test_is_one_in_every_report():
    log = "\n".join([
        "=================================== FAILURES ===================================",
        "_____________ test_scan2d[cumsum-float32-1] _____________", SECTION,
        "_____________ test_reduce_layouts[float32-1-src_layout3] _____________", SECTION,
        "=========================== short test summary info ============================",
        f"FAILED {T1}[cumsum-float32-1] - Failed: Timeout (>300.0s) from pytest-timeout.",
        f"FAILED {T2}[float32-1-src_layout3] - Failed: Timeout (>300.0s) from pytest-timeout.",
        "============ 2 failed, 10 passed in 601.00s ============"])
    recs = [r for r in from_log(log, job="gpu-tests") if r.outcome != "passed"]
    assert sorted(signature_of(r.text, r.test).key for r in recs) == [KEY + T2, KEY + T1]
    xml = ('<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="1" failures="1">'
           '<testcase classname="python.test.unit.language.test_core" name="test_scan2d[cumsum-float32-1]" '
           'time="300.1"><failure message="Failed: Timeout (&gt;300.0s) from pytest-timeout.">'
           + SECTION.replace(">", "&gt;") + "</failure></testcase></testsuite></testsuites>")
    (rec,) = from_junit(xml)
    assert signature_of(rec.text, rec.test).key == KEY + T1


def test_an_http_statuss_host_is_never_the_urls_user_info():
    # a URL with credentials (a token in a clone or download URL): the host named in the identity was the
    # userinfo too — the token itself when the status line named no URL and the host came from the text above
    # (it reached the key, the signature row and the suggested rule unredacted), a 5xx's "domain" was
    # the user name, and one service's 404 was two identities with and without credentials
    token = "ghs_16C7e42F292c6912E7710c838347Ae178B4a"     # GitHub's documented example token
    above = f"Downloading https://x-access-token:{token}@files.example.com/w.bin\n"
    s = signature_of(above + "E       requests.exceptions.HTTPError: 404 Client Error: Not Found", T1)
    assert (s.key, token in repr(s)) == ("HTTPError|HTTP 404 Not Found from files.example.com", False)
    s = signature_of(f"Downloading https://oncall:{token}@hub-ci.example.com/w.bin\n"
                     "E       requests.exceptions.HTTPError: 503 Server Error: Service Unavailable", T1)
    assert s.key == "HTTPError|HTTP 5xx Server Error from example.com"
    line = "E       requests.exceptions.HTTPError: 404 Client Error: Not Found for url: https://{}github.com/o/w/raw/main/w.bin"
    assert signature_of(line.format(f"oncall:{token}@"), T1).key == signature_of(line.format(""), T1).key \
        == "HTTPError|HTTP 404 Not Found from github.com"


def test_a_summary_lines_empty_message_is_read_on_the_next_line_as_in_the_failure_section():
    # numpy's assert_allclose raises "AssertionError: " + newline + "Not equal to tolerance …": a CI log that kept
    # pytest's summary with the message's next lines (intel-xpu-backend-for-triton's Windows runs) had an empty
    # identity, apart from the same failure's section
    t = "python/test/unit/language/test_core.py::test_dot3d"
    section = ("E       AssertionError: \nE       Not equal to tolerance rtol=0.01, atol=0.01\nE       \n"
               "E       Mismatched elements: 509 / 32768 (1.55%)")
    summary = (f"2025-02-26T07:40:38.1837785Z FAILED {t}[8-2-64-64-64-32-32-float32-float32] - AssertionError: \n"
               "2025-02-26T07:40:38.1841923Z Not equal to tolerance rtol=0.01, atol=0.01\n"
               "2025-02-26T07:40:38.1842122Z \n"
               "2025-02-26T07:40:38.1842258Z Mismatched elements: 509 / 32768 (1.55%)")
    assert signature_of(summary, t).key == signature_of(section, t).key == \
        f"AssertionError|Not equal to tolerance rtol=<f> atol=<f> Mismatched elements: <n>|{t}"
    # the next line that is another test's outcome is no message
    s = signature_of(f"FAILED {t}[a] - AssertionError: \nFAILED {t}[b] - AssertionError: \n", t)
    assert s.key == f"AssertionError||{t}"
