"""``forksync queue --dismiss ID [--reason TEXT]``: the operator's way to settle a dead letter that
can never succeed (a signed but malformed delivery), on a real store. Before, ``forksync queue``
offered only ``--retry``, which dead-lettered it again, so ``/healthz`` stayed 503 for ever."""
import json

from bot.app import queue as q
from bot.cli.main import main
from bot.store import Store


def _dead(db):
    with Store(db) as store:
        q.enqueue(store, delivery_id="bad", hook_id="", event="issue_comment", body=b"{}",
                  summary={"action": "created", "repo": "meta/triton"}, now=1000)
        d = q.claim(store, "w", now=1001)
        q.fail(store, d.id, "w", "malformed issue_comment payload: comment.id: field required", permanent=True, now=1002)


def test_dismiss_settles_a_dead_letter_and_keeps_it_listed(tmp_path, capsys, monkeypatch):
    db = tmp_path / "q.db"
    _dead(db)
    monkeypatch.setenv("LOGNAME", "ops-ana")
    assert main(["queue", "--db", str(db)]) == 0
    listed = capsys.readouterr().out
    # the listing says what can be done with a dead letter, --dismiss included
    assert "forksync queue --dismiss bad --reason" in listed
    assert main(["queue", "--db", str(db), "--dismiss", "bad", "--reason", "GitHub sent it without comment.id"]) == 0
    assert capsys.readouterr().out.strip() == (
        "bad: dismissed by ops-ana (no longer a dead-letter alarm: /healthz and /metrics drop it now, its fork's status "
        "issue at the worker's next turn; `forksync queue --state dismissed` lists it)")
    with Store(db) as store:
        assert q.counts(store)["dead"] == 0 and q.dead_letter_alarm(store) == ""
        d = q.get(store, "bad")
        assert (d.state, d.dismissed_by, d.dismiss_reason) == ("dismissed", "ops-ana", "GitHub sent it without comment.id")
        assert d.dead_reason == "cannot be handled: malformed issue_comment payload: comment.id: field required"
    assert main(["queue", "--db", str(db), "--state", "dismissed"]) == 0
    out = capsys.readouterr().out
    assert "dismissed=1" in out.splitlines()[0] and "dead=0" in out.splitlines()[0]
    assert "dismissed  bad" in out
    assert "    was dead: cannot be handled: malformed issue_comment payload: comment.id: field required" in out
    assert "    dismissed by ops-ana at " in out and ": GitHub sent it without comment.id" in out
    assert main(["queue", "--db", str(db), "--state", "dismissed", "--json"]) == 0
    [row] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert (row["state"], row["dismissed_by"], row["dismiss_reason"]) == ("dismissed", "ops-ana",
                                                                          "GitHub sent it without comment.id")


def test_dismiss_without_a_reason_and_of_what_is_not_dead(tmp_path, capsys, monkeypatch):
    db = tmp_path / "q.db"
    _dead(db)
    monkeypatch.setenv("LOGNAME", "ops-ana")
    assert main(["queue", "--db", str(db), "--dismiss", "nope"]) == 2
    assert capsys.readouterr().err == "forksync: no dead delivery 'nope' to dismiss (see `forksync queue --state dead`)\n"
    # a reason without a delivery to dismiss is said, not dropped
    assert main(["queue", "--db", str(db), "--reason", "why"]) == 2
    assert capsys.readouterr().err == "forksync: --reason goes with --dismiss ID: it says why that dead letter is dismissed\n"
    assert main(["queue", "--db", str(db), "--dismiss", "bad"]) == 0
    capsys.readouterr()
    assert main(["queue", "--db", str(db), "--dismiss", "bad"]) == 2
    assert "no dead delivery 'bad' to dismiss" in capsys.readouterr().err
    assert main(["queue", "--db", str(db), "--state", "dismissed"]) == 0
    assert ": no reason given" in capsys.readouterr().out
    # the operator changes their mind: a dismissed delivery can be retried like a dead one
    assert main(["queue", "--db", str(db), "--retry", "bad"]) == 0
    with Store(db) as store:
        assert q.get(store, "bad").state == "queued"


def test_a_dismissal_is_taken_off_the_status_issue_once_and_again_after_a_second_dismissal(tmp_path):
    """``forksync queue`` cannot reach GitHub: the worker takes each dismissal (re-rendering the
    status issue that listed the letter) until it marks it taken, and again when the letter,
    retried, went dead and was dismissed again — even one dismissed again between the read and
    the mark."""
    db = tmp_path / "q.db"
    _dead(db)

    def take(store):
        ds = q.untaken_dismissals(store)
        q.mark_dismissals_taken(store, ds)
        return ds

    with Store(db) as store:
        assert q.untaken_dismissals(store) == []
        assert q.dismiss(store, "bad", by="ops-ana", now=2000)
        assert [(d.id, d.repo, d.dismissed_at) for d in q.untaken_dismissals(store)] == [("bad", "meta/triton", 2000)]
        # not marked (the render failed): still untaken
        assert [(d.id, d.dismissed_at) for d in take(store)] == [("bad", 2000)]
        assert take(store) == []
        assert q.retry_dead(store, "bad", now=2001)
        d = q.claim(store, "w", now=2002)
        q.fail(store, d.id, "w", "malformed issue_comment payload: comment.id: field required", permanent=True, now=2003)
        assert take(store) == []
        assert q.dismiss(store, "bad", by="ops-ana", now=2004)
        read = q.untaken_dismissals(store)
        assert [d.dismissed_at for d in read] == [2004]
        assert q.retry_dead(store, "bad", now=2005)
        d = q.claim(store, "w", now=2006)
        q.fail(store, d.id, "w", "malformed issue_comment payload: comment.id: field required", permanent=True, now=2007)
        assert q.dismiss(store, "bad", by="ops-ana", now=2008)
        q.mark_dismissals_taken(store, read)     # the read of the 2004 dismissal: the 2008 one stays untaken
        assert [d.dismissed_at for d in take(store)] == [2008]
        assert take(store) == []


async def test_a_fork_whose_status_issue_fails_keeps_no_other_forks_dismissals_listed(tmp_path):
    """Two forks' dead letters dismissed: GitHub refuses one fork's status issue edit every time
    (Issues turned off, the repository gone). The other fork's letter is taken off its issue at
    the same turn, and only the failing one is tried again, after the worker's wait."""
    from bot.app.worker import DISMISSAL_RETRY_S, Worker

    now = [3000.0]
    with Store(tmp_path / "q.db") as store:
        for key, repo in (("bad-a", "meta/a"), ("bad-b", "meta/b")):
            q.enqueue(store, delivery_id=key, hook_id="", event="issue_comment", body=b"{}",
                      summary={"action": "created", "repo": repo}, now=1000)
            d = q.claim(store, "w", now=1001)
            q.fail(store, d.id, "w", "malformed issue_comment payload: comment.id: field required", permanent=True, now=1002)
            assert q.dismiss(store, key, by="ops-ana", now=2000)
        rendered: list[str] = []

        async def on_resolved(ds):
            if ds[0].repo == "meta/a":
                raise RuntimeError("GitHub answered 410: Issues are disabled")
            rendered.extend(d.id for d in ds)

        async def process(d):
            return "handled"

        w = Worker(store, process, worker_id="w", clock=lambda: now[0], on_resolved=on_resolved)
        await w.run_once()
        assert rendered == ["bad-b"]
        assert [d.id for d in q.untaken_dismissals(store)] == ["bad-a"]
        await w.run_once()                      # within the wait: not tried again
        assert rendered == ["bad-b"]
        now[0] += DISMISSAL_RETRY_S[0] + 1
        await w.run_once()
        assert rendered == ["bad-b"] and [d.id for d in q.untaken_dismissals(store)] == ["bad-a"]
