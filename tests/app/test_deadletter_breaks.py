"""A dead letter that can never succeed, as a new operator meets it: a signed ``issue_comment``
without ``comment.id`` is dead-lettered at once, and ``/healthz`` answers 503. The operator must be
able to settle it (dismiss it: no longer an alarm, still listed, never deleted), and its reason must
say which field of the payload is wrong by its payload path, without echoing the payload or
pydantic's internals. Real store, the real routers and dispatcher, the aiohttp app."""
import json

import pytest
from aiohttp.test_utils import TestClient, TestServer

from bot.app import queue as q
from bot.app.dispatch import Dispatcher
from bot.app.metrics import AppMetrics
from bot.app.web import app_facts, make_app
from bot.app.worker import Worker
from bot.commands.runner import _Comment
from bot.github.common import PayloadError, RepoRef, from_payload
from bot.handlers import all_routers
from bot.store import Store

MALFORMED = {"action": "created", "comment": {"body": "/forksync help"}}


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "d.db")
    yield s
    s.close()


async def _dead_malformed_comment(store, clock):
    q.enqueue(store, delivery_id="g-malformed", hook_id="", event="issue_comment",
              body=json.dumps(MALFORMED).encode(), summary=q.summarize_payload(MALFORMED), now=clock[0])

    async def client_for(inst):
        return None

    disp = Dispatcher(all_routers(), store, None, client_for=client_for, bot_login="forksync[bot]",
                      now=lambda: clock[0])
    w = Worker(store, disp.process, worker_id="w1", clock=lambda: clock[0])
    assert await w.drain() == 1
    return q.get(store, "g-malformed")


async def test_a_malformed_comment_is_dead_with_the_payload_path_of_its_missing_field(store):
    """What the operator saw: "1 validation error for _Comment id Field required [type=missing,
    input_value={'body': '/forksync help'} …] … errors.pydantic.dev". What they should see: which
    field of which event is missing, by its payload path, and nothing of the payload's text."""
    d = await _dead_malformed_comment(store, [1000.0])
    assert d.state == "dead"
    assert d.dead_reason == "cannot be handled: malformed issue_comment payload: comment.id: field required"
    for leak in ("_Comment", "/forksync help", "pydantic", "input_value", "validation error"):
        assert leak not in d.dead_reason and leak not in q.dead_letter_alarm(store)


@pytest.mark.parametrize("data,path,want", [
    ({"comment": {"body": "secret words"}}, ("comment",), "comment.id: field required"),
    ({"comment": {"id": "not-a-number", "body": "secret words"}}, ("comment",), "comment.id: should be an integer"),
    ({"comment": "secret words"}, ("comment",), "comment: should be an object"),
    ({}, ("comment",), "comment: field required"),
    ({"comment": {"id": 1, "user": {"type": "User"}}}, ("comment",), "comment.user.login: field required"),
    ({"comment": {"id": 1, "body": ["secret words"]}}, ("comment",), "comment.body: should be a string"),
])
def test_a_payload_model_names_each_wrong_field_by_its_payload_path(data, path, want):
    with pytest.raises(PayloadError) as e:
        from_payload(_Comment, data, *path)
    assert str(e.value) == want
    assert "secret words" not in str(e.value)


def test_a_nested_payload_path_and_a_wrong_parent():
    with pytest.raises(PayloadError, match=r"^repository\.full_name: field required$"):
        from_payload(RepoRef, {"repository": {"name": "triton"}}, "repository")
    with pytest.raises(PayloadError, match=r"^pull_request\.base: should be an object$"):
        from_payload(RepoRef, {"pull_request": {"base": 7}}, "pull_request", "base", "repo")
    assert from_payload(RepoRef, {"repository": {"full_name": "meta/triton"}}, "repository").full_name == "meta/triton"


async def test_a_dismissed_dead_letter_turns_healthz_green_and_stays_listed(store):
    """What the operator saw: the dead letter turned ``/healthz`` 503 for ever (``--retry`` only
    dead-letters it again). What they should be able to do: dismiss it, recorded with who, when and
    why; ``/healthz`` no longer counts it; it is still listed (queue, dashboard), never deleted."""
    clock = [10_000.0]
    d = await _dead_malformed_comment(store, clock)
    client = TestClient(TestServer(make_app(store, "s", metrics=AppMetrics(lambda: store), clock=lambda: clock[0])))
    await client.start_server()
    try:
        async def health():
            r = await client.get("/healthz")
            return r.status, (await r.json()).get("problems", [])

        assert await health() == (503, ["1 dead-lettered delivery: see `forksync queue --state dead`"])
        assert not q.dismiss(store, "no-such", by="ana", reason="x", now=10_100.0)
        assert q.dismiss(store, d.id, by="ana", reason="GitHub sent it without comment.id", now=10_100.0)
        assert await health() == (200, [])
    finally:
        await client.close()
    assert q.counts(store)["dead"] == 0 and q.counts(store)["dismissed"] == 1
    assert q.dead_letter_alarm(store) == "" and q.dead_letters(store) == []
    [kept] = q.listing(store, ["dismissed"])
    assert (kept.id, kept.dismissed_by, kept.dismissed_at, kept.dismiss_reason) == (
        d.id, "ana", 10_100.0, "GitHub sent it without comment.id")
    assert kept.dead_reason == d.dead_reason                     # why it died stays with it
    assert q.dismissed_letters(store) == [{"id": d.id, "event": "issue_comment", "action": "created", "repo": "",
                                           "reason": d.dead_reason, "by": "ana", "at": 10_100.0,
                                           "why": "GitHub sent it without comment.id"}]
    assert app_facts(store, clock[0])["dismissed"] == q.dismissed_letters(store)
    assert not q.dismiss(store, d.id, by="ana", reason="again", now=10_200.0)      # only a dead letter
    assert q.prune(store, keep_s=0.0, now=1e12) == 0 and q.get(store, d.id) is not None
    # GitHub's "Redeliver" asks for it again: queued, the dismissal kept as history
    assert q.enqueue(store, delivery_id="g-malformed", hook_id="", event="issue_comment", body=b"{}",
                     now=10_300.0) == "requeued"
    assert q.get(store, d.id).state == "queued" and q.get(store, d.id).dismissed_by == "ana"


async def test_the_health_page_shows_a_dismissed_dead_letter_with_its_dismissal(tmp_path):
    """A dismissal is never silent: the dashboard's health page and ``/api/v1/health`` show the
    dismissed dead letter, why it went dead, and who dismissed it, when and why."""
    from bot.app.web import mount_dashboard

    store = Store(tmp_path / "h.db")
    clock = [20_000.0]
    d = await _dead_malformed_comment(store, clock)
    assert q.dismiss(store, d.id, by="ana", reason="GitHub sent it without comment.id", now=20_100.0)
    app = make_app(store, "s", clock=lambda: clock[0])
    mount_dashboard(app, Store(tmp_path / "h.db"), clock=lambda: clock[0])
    c = TestClient(TestServer(app))
    await c.start_server()
    try:
        doc = await (await c.get("/api/v1/health")).json()
        assert doc["status"] == "ok" and doc["dead"] == [] and doc["deliveries"]["dismissed"] == 1
        assert doc["dismissed"] == [{"id": d.id, "event": "issue_comment", "repo": "", "reason": d.dead_reason,
                                     "by": "ana", "why": "GitHub sent it without comment.id",
                                     "at": "1970-01-01T05:35:00Z"}]
        html = await (await c.get("/health")).text()
        assert "Dismissed dead letters" in html and "comment.id: field required" in html
        assert "by ana" in html and "GitHub sent it without comment.id" in html
    finally:
        await c.close()
        store.close()


async def test_a_converted_to_draft_payload_names_its_wrong_field_by_its_payload_path(store):
    """The other pull_request handlers read ``repository`` through ``from_payload``; the
    ``converted_to_draft`` one read it with ``model_validate`` (``full_name: field required``, no
    ``repository.``) and with ``data["repository"]`` (a ``KeyError``) when it is missing."""
    clock = [1000.0]

    async def client_for(inst):
        return None

    disp = Dispatcher(all_routers(), store, None, client_for=client_for, bot_login="forksync[bot]",
                      now=lambda: clock[0])
    w = Worker(store, disp.process, worker_id="w1", clock=lambda: clock[0])
    for key, data in (("g-no-name", {"action": "converted_to_draft", "repository": {"name": "triton"},
                                     "pull_request": {"number": 7, "state": "open"}}),
                      ("g-no-repo", {"action": "converted_to_draft", "pull_request": {"number": 7, "state": "open"}})):
        q.enqueue(store, delivery_id=key, hook_id="", event="pull_request", body=json.dumps(data).encode(),
                  summary=q.summarize_payload(data), now=clock[0])
    assert await w.drain() == 2
    assert [q.get(store, k).dead_reason for k in ("g-no-name", "g-no-repo")] == [
        "cannot be handled: malformed pull_request payload: repository.full_name: field required",
        "cannot be handled: malformed pull_request payload: repository: field required"]


REPO = {"full_name": "meta/triton"}
MARKED = {"body": "<!-- forksync:status-issue -->"}


@pytest.mark.parametrize("event, data, reason", [
    ("pull_request_review", {"action": "submitted", "repository": REPO, "pull_request": {"number": 7, "state": "open"}},
     "review: field required"),
    ("pull_request_review", {"action": "submitted", "repository": REPO, "review": {"body": "/forksync signoff llvm"},
                             "pull_request": {"number": 7, "state": "open"}}, "review.id: field required"),
    ("pull_request_review", {"action": "dismissed", "repository": REPO, "review": {"id": 3, "body": ""}},
     "pull_request: field required"),
    ("pull_request_review_comment", {"action": "created", "repository": REPO, "comment": {"id": 4, "body": "lgtm"},
                                     "pull_request": {"state": "open"}}, "pull_request.number: field required"),
    ("pull_request", {"action": "closed", "repository": REPO}, "pull_request: field required"),
    ("pull_request", {"action": "opened", "repository": REPO, "pull_request": {"state": "open", "head": {"ref": "x", "sha": "y"}}},
     "pull_request.number: field required"),
    ("pull_request", {"action": "synchronize", "repository": REPO, "pull_request": {"number": 7, "state": "open"}},
     "pull_request.head: field required"),
    ("pull_request", {"action": "labeled", "repository": REPO, "pull_request": [7]}, "pull_request: should be an object"),
    ("issues", {"action": "edited", "repository": REPO}, "issue: field required"),
    ("issues", {"action": "edited", "repository": REPO, "issue": MARKED}, "issue.number: field required"),
    ("check_run", {"action": "completed", "repository": REPO}, "check_run: field required"),
    ("check_run", {"action": "rerequested", "repository": REPO, "check_run": {"name": "forksync/gate"}},
     "check_run.head_sha: field required"),
    ("workflow_run", {"action": "completed", "workflow_run": {"name": "forksync l1 x"}}, "repository: field required"),
])
async def test_every_handlers_malformed_payload_names_its_wrong_field_by_its_payload_path(store, event, data, reason):
    """What a handler reads of a payload it reads through ``from_payload`` (or checks as it), so a
    dead letter says which field GitHub sent missing or wrong by its payload path — not a
    ``KeyError: 'review'`` (the review's command handler indexed the payload) nor an error of a
    service the handler reached with half a payload."""
    clock = [1000.0]

    async def client_for(inst):
        return None

    disp = Dispatcher(all_routers(), store, None, client_for=client_for, bot_login="forksync[bot]",
                      now=lambda: clock[0])
    w = Worker(store, disp.process, worker_id="w1", clock=lambda: clock[0])
    q.enqueue(store, delivery_id="g", hook_id="", event=event, body=json.dumps(data).encode(),
              summary=q.summarize_payload(data), now=clock[0])
    assert await w.drain() == 1
    assert q.get(store, "g").dead_reason == f"cannot be handled: malformed {event} payload: {reason}"
