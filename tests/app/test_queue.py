"""The durable delivery queue on a real SQLite file: states, de-duplication, retries, leases."""
import random

import pytest

from bot.app import queue as q
from bot.store import Store

POLICY = q.QueuePolicy(max_attempts=3, backoff_base_s=10, backoff_cap_s=25, lease_s=60)


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "forksync.db")
    yield s
    s.close()


def put(store, guid, now=1000.0, hook="7"):
    return q.enqueue(store, delivery_id=guid, hook_id=hook, event="push", body=b'{"a":1}',
                     summary={"action": "", "installation_id": 5, "repo": "o/r", "sender": "u"}, now=now)


def test_enqueue_claim_complete_and_redelivery_of_done_is_ignored(store):
    assert put(store, "g1") == "queued"
    d = q.claim(store, "w1", POLICY, now=1001)
    assert (d.id, d.event, d.body, d.attempts, d.installation_id, d.repo) == ("g1/7", "push", b'{"a":1}', 1, 5, "o/r")
    assert put(store, "g1", now=1002) == "duplicate"        # in progress: no second copy
    assert q.complete(store, "g1/7", "w1", "ok", now=1003)
    assert put(store, "g1", now=1004) == "duplicate"        # done: not processed again
    assert q.claim(store, "w1", POLICY, now=2000) is None
    assert q.get(store, "g1/7").redeliveries == 2
    assert q.counts(store) == {"queued": 0, "processing": 0, "done": 1, "failed": 0, "dead": 0, "resolved": 0, "paused": 0, "dismissed": 0}


def test_failed_delivery_is_retried_after_backoff_then_dead_with_reason(store):
    rng = random.Random(0)
    put(store, "g2")
    d = q.claim(store, "w", POLICY, now=1000)
    assert q.fail(store, d.id, "w", "GitHubBroken: 502", policy=POLICY, now=1000, rng=rng) == "failed"
    assert q.claim(store, "w", POLICY, now=1001) is None          # backing off (≥ 5 s)
    d = q.claim(store, "w", POLICY, now=1011)
    assert d.attempts == 2
    assert q.fail(store, d.id, "w", "GitHubBroken: 503", policy=POLICY, now=1011, rng=rng) == "failed"
    d = q.claim(store, "w", POLICY, now=1100)
    assert d.attempts == 3
    assert q.fail(store, d.id, "w", "GitHubBroken: 504", policy=POLICY, now=1100, rng=rng) == "dead"
    dead = q.listing(store, ["dead"])
    assert [(x.id, x.dead_reason) for x in dead] == [("g2/7", "gave up after 3 attempts; last error: GitHubBroken: 504")]


def test_permanent_failure_goes_dead_at_once_and_a_redelivery_requeues_it(store):
    put(store, "g3")
    d = q.claim(store, "w", POLICY, now=1000)
    assert q.fail(store, d.id, "w", "payload is not a JSON object", permanent=True, policy=POLICY, now=1000) == "dead"
    assert q.get(store, "g3/7").dead_reason == "cannot be handled: payload is not a JSON object"
    assert put(store, "g3", now=1200) == "requeued"
    d = q.claim(store, "w", POLICY, now=1200)
    assert (d.id, d.attempts, d.state) == ("g3/7", 1, "processing")


def test_expired_lease_is_taken_over_and_the_old_worker_cannot_finish(store):
    put(store, "g4")
    d = q.claim(store, "dead-worker", POLICY, now=1000)
    assert q.claim(store, "w2", POLICY, now=1030) is None          # lease still held
    d2 = q.claim(store, "w2", POLICY, now=1061)                    # lease expired: taken over
    assert (d2.id, d2.attempts) == (d.id, 2)
    assert not q.complete(store, d.id, "dead-worker", now=1062)
    assert q.fail(store, d.id, "dead-worker", "x", policy=POLICY, now=1062) is None
    assert q.complete(store, d.id, "w2", now=1063)
    assert q.get(store, d.id).state == "done"


def test_same_guid_from_two_hooks_are_two_deliveries_and_order_is_oldest_first(store):
    put(store, "g5", now=1000, hook="1")
    put(store, "g5", now=1001, hook="2")
    put(store, "g0", now=999, hook="")
    ids = [q.claim(store, "w", POLICY, now=1100).id for _ in range(3)]
    assert ids == ["g0", "g5/1", "g5/2"]


def test_retry_dead_and_listing_filters(store):
    put(store, "g6")
    d = q.claim(store, "w", POLICY, now=1000)
    q.fail(store, d.id, "w", "bad", permanent=True, policy=POLICY, now=1000)
    put(store, "g7", now=1001)
    assert [x.id for x in q.listing(store)] == ["g7/7", "g6/7"]
    assert q.retry_dead(store, "g6/7", now=1002)
    assert not q.retry_dead(store, "g7/7", now=1002)
    assert q.counts(store)["queued"] == 2


def test_summarize_payload_tolerates_any_json():
    assert q.summarize_payload([1, 2]) == {"action": "", "installation_id": None, "repo": "", "sender": ""}
    assert q.summarize_payload({"action": "opened", "installation": {"id": True}, "repository": "x"}) == \
        {"action": "opened", "installation_id": None, "repo": "", "sender": ""}


def test_backoff_is_capped():
    p = q.QueuePolicy(backoff_base_s=2, backoff_cap_s=30)
    assert [p.backoff(n, random.Random(1)) <= c for n, c in [(1, 2), (3, 8), (10, 30)]] == [True] * 3
    assert p.backoff(10, random.Random(1)) >= 15


def dead_adoption(store, guid, *, event="installation", action="created", repo="o/r", now=1000.0):
    q.enqueue(store, delivery_id=guid, hook_id="7", event=event, body=b"{}", now=now,
              summary={"action": action, "installation_id": 5, "repo": repo, "sender": "u"})
    d = q.claim(store, "w", POLICY, now=now)
    assert q.fail(store, d.id, "w", "GitHub answered 403", permanent=True, policy=POLICY, now=now) == "dead"
    return d.id


def handled(store, guid, *, event="installation_repositories", action="added", repo="o/r", now=2000.0):
    q.enqueue(store, delivery_id=guid, hook_id="7", event=event, body=b"{}", now=now,
              summary={"action": action, "installation_id": 5, "repo": repo, "sender": "u"})
    d = q.claim(store, "w", POLICY, now=now)
    assert q.complete(store, d.id, "w", "adopted", now=now)
    return d.id


@pytest.mark.parametrize("later, resolves", [
    (dict(), True),                                                     # installation_repositories.added
    (dict(event="installation", action="created"), True),               # the same event, a new GUID
    (dict(repo="o/other"), False),                                      # another repository's adoption
    (dict(repo=""), False),                                             # several repositories: none named
    (dict(now=500.0), False),                                           # received before the dead one
    (dict(event="push", action=""), False),                             # other work on the repository
    (dict(event="installation_repositories", action="removed"), False),
])
def test_a_handled_delivery_resolves_the_dead_adoptions_it_redoes(store, later, resolves):
    dead = dead_adoption(store, "dead")
    ok = handled(store, "later", **later)
    got = q.get(store, dead)
    if resolves:
        assert (got.state, got.resolved_by) == ("resolved", ok)
        assert got.dead_reason == "cannot be handled: GitHub answered 403"          # kept as history
        assert [d.id for d in q.resolved_by(store, ok)] == [dead]
        assert q.dead_letters(store) == [] and q.dead_letter_alarm(store) == ""
    else:
        assert (got.state, got.resolved_by) == ("dead", "")
        assert q.resolved_by(store, ok) == [] and [d["id"] for d in q.dead_letters(store)] == [dead]


def test_a_redelivery_handled_resolves_its_own_dead_letter_and_keeps_its_reason(store):
    dead = dead_adoption(store, "g", event="push", action="")
    assert put(store, "g", now=1500) == "requeued"
    assert q.dead_letters(store) == []
    d = q.claim(store, "w", POLICY, now=1500)
    assert q.complete(store, d.id, "w", "synced", now=1500)
    got = q.get(store, dead)
    assert (got.state, got.resolved_by, got.dead_reason) == ("done", dead, "cannot be handled: GitHub answered 403")
    assert [x.id for x in q.resolved_by(store, dead)] == [dead]


def test_done_deliveries_are_pruned_after_the_retention_and_dead_letters_are_kept(store):
    """Every delivery keeps the body GitHub signed (up to 25 MB): done ones are deleted once older
    than the retention (GitHub redelivers only within 3 days), so the store does not grow for
    ever; dead letters stay until they are resolved, and work not yet done is never touched."""
    day = 86_400.0
    for n, guid in enumerate(("old-done", "new-done", "old-dead", "old-queued")):
        put(store, guid, now=1000.0 + n)          # claimed in the order received
    for guid, finished in (("old-done", 1000.0 + day), ("new-done", 1000.0 + 13 * day)):
        d = q.claim(store, "w", POLICY, now=finished - 1)
        assert d.id == f"{guid}/7"
        q.complete(store, d.id, "w", "ok", now=finished)
    d = q.claim(store, "w", POLICY, now=1000.0 + day)
    assert d.id == "old-dead/7"
    q.fail(store, d.id, "w", "malformed", permanent=True, policy=POLICY, now=1000.0 + day)
    now = 1000.0 + 16 * day
    assert q.prune(store, keep_s=14 * day, now=now) == 1
    assert q.get(store, "old-done/7") is None
    assert {d.id: d.state for d in q.listing(store)} == {"new-done/7": "done", "old-dead/7": "dead",
                                                         "old-queued/7": "queued"}
    assert q.prune(store, keep_s=14 * day, now=now) == 0
