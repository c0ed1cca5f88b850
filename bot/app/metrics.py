"""Prometheus metrics of the GitHub App (``GET /metrics``), on a registry of its own.

Live counters/histograms (this process): ``forksync_webhook_deliveries_total{event,outcome}``
(outcome ∈ queued, requeued, duplicate, unsigned, bad_signature, bad_request),
``forksync_webhook_ack_seconds``, ``forksync_delivery_processing_seconds{state}``.

Read from the store at scrape time (so a separate ``forksync worker`` process is covered too):
``forksync_queue_depth{state}``, ``forksync_queue_oldest_queued_age_seconds``,
``forksync_delivery_latency_seconds{quantile}`` (received → processed, last 1000), and per fork
``forksync_days_behind{repo}``, ``forksync_backlog{repo}``, ``forksync_upstream_age_seconds{repo}``
(seconds since upstream was last fetched successfully), ``forksync_metrics_stale{repo}`` (1 when
the last fetch of upstream failed or it is older than the fork's ``github.stale_after_s`` as its
last sync recorded it, else the App's default: the rule of the dashboard and the status issue) and
``forksync_upstream_age_alarm{repo}`` (older than the default ``github.alarm_after_s``). A fork
whose numbers were never computed (its first fetch failed) has no ``forksync_days_behind`` or
``forksync_backlog`` sample: a 0 would read as "in sync". Failures stay visible:
``forksync_degraded{repo,reason}`` (1 while a unit is blocked — GitHub refused its push, PR or
merge, its pick failed without a conflict, or it waits for a person —, open units are held because
upstream's branch moved back past their commits, or a delivery of the fork is dead-lettered),
``forksync_blocked_units{repo}`` and ``forksync_dead_letter_alarm{reason}`` (1 while any delivery is
dead; :func:`bot.app.queue.dead_letter_alarm` gives the same line for
``/healthz``). A store that cannot be read is an answer too: ``forksync_store_up`` is 0 and
``forksync_store_error{error}`` says why (the process's own counters are still served); 1 otherwise.
Every reason label goes through :func:`bot.agents.redact.scrub`, as the dashboard's texts do:
a stored error may hold a token or a URL's password.

Two views of the same counters. :attr:`AppMetrics.registry` has every series above, named per fork:
``/metrics`` serves it only to a scraper holding the metrics token (``FORKSYNC_METRICS_TOKEN``).
:attr:`AppMetrics.public_registry` is what ``/metrics`` serves without a token (it is on the
webhook's port, reachable by anyone): forksync does not know which forks are private, so that view
names no fork and quotes no fork's error. The per-fork series are folded into App-wide totals —
``forksync_forks`` (forks with a status), ``forksync_forks_degraded``, ``forksync_forks_stale``,
``forksync_forks_upstream_age_alarm``, ``forksync_blocked_units`` (all forks) — and
``forksync_dead_letter_alarm`` keeps its value with an empty reason; ``forksync_days_behind``,
``forksync_backlog`` and ``forksync_upstream_age_seconds`` are left out.
"""
from __future__ import annotations

import logging
import time

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily

from bot.agents.redact import error_text, scrub
from bot.app import queue as q
from bot.store import Store
from bot.sync import store as sync_store

log = logging.getLogger(__name__)

KNOWN_EVENTS = frozenset({"push", "pull_request", "issue_comment", "issues", "check_run", "check_suite",
                          "installation", "installation_repositories", "ping", "pull_request_review",
                          "workflow_run", "status"})


class AppMetrics:
    def __init__(self, store_factory=None, stale_after_s: float = 86_400, alarm_after_s: float = 3 * 86_400):
        self.registry = CollectorRegistry(auto_describe=True)
        self.deliveries = Counter("forksync_webhook_deliveries", "Webhook deliveries received, by outcome",
                                  ["event", "outcome"], registry=self.registry)
        self.ack_seconds = Histogram("forksync_webhook_ack_seconds", "Time to verify, store and acknowledge a delivery",
                                     buckets=(.001, .0025, .005, .01, .025, .05, .1, .25, 1, 5),
                                     registry=self.registry)
        self.processing_seconds = Histogram("forksync_delivery_processing_seconds",
                                            "Time to process one delivery attempt, by resulting state",
                                            ["state"], buckets=(.01, .05, .1, .5, 1, 5, 15, 60, 300),
                                            registry=self.registry)
        self._store_factory = store_factory
        self.stale_after_s = stale_after_s
        self.alarm_after_s = alarm_after_s
        self.public_registry = CollectorRegistry(auto_describe=True)
        for live in (self.deliveries, self.ack_seconds, self.processing_seconds):
            self.public_registry.register(live)     # one counter, served by both views
        if store_factory is not None:
            self.registry.register(_StoreCollector(self, named=True))
            self.public_registry.register(_StoreCollector(self, named=False))

    def event_label(self, event: str | None) -> str:
        return event if event in KNOWN_EVENTS else "other"

    def observe_processing(self, seconds: float, delivery: q.Delivery, state: str) -> None:
        self.processing_seconds.labels(state).observe(seconds)


class _StoreCollector:
    def __init__(self, m: AppMetrics, *, named: bool):
        self.m = m
        self.named = named

    def describe(self):
        return []

    def collect(self):
        up = GaugeMetricFamily("forksync_store_up", "1 when the store could be read for this scrape, 0 when it failed")
        try:
            # every read before the first yield: a store that fails half way through gives the
            # two store metrics below, never a scrape cut short by a 500
            fams = self._from_store(self.m._store_factory(), time.time())
        except Exception as e:  # noqa: BLE001 - a failing store is an answer, not a crash of the scrape
            reason = error_text(e, 200)
            log.warning("metrics: the store cannot be read: %s", reason)
            up.add_metric([], 0.0)
            err = GaugeMetricFamily("forksync_store_error", "1 while the store cannot be read; the error is a label",
                                    labels=["error"])
            err.add_metric([reason], 1.0)
            yield up
            yield err
            return
        up.add_metric([], 1.0)
        yield up
        yield from fams

    def _from_store(self, store: Store, now: float) -> list[GaugeMetricFamily]:
        out = []
        depth = GaugeMetricFamily("forksync_queue_depth", "Deliveries in the durable queue, by state",
                                  labels=["state"])
        for state, n in q.counts(store).items():
            depth.add_metric([state], n)
        out.append(depth)
        first = q.oldest_pending_at(store)
        oldest = GaugeMetricFamily("forksync_queue_oldest_queued_age_seconds",
                                   "Age of the oldest delivery not yet done")
        oldest.add_metric([], max(0.0, now - first) if first else 0.0)
        out.append(oldest)
        lat = sorted(q.recent_latencies(store, 1000))
        done = GaugeMetricFamily("forksync_delivery_latency_seconds",
                                 "Received → processed, over the last 1000 done deliveries (any worker process)",
                                 labels=["quantile"])
        for qtl in (0.5, 0.99):
            done.add_metric([str(qtl)], lat[min(len(lat) - 1, int(qtl * len(lat)))] if lat else 0.0)
        out.append(done)
        forks = self._forks(store, now)
        out.extend(self._per_fork(forks) if self.named else self._folded(forks))
        alarm = scrub(q.dead_letter_alarm(store))
        dead = GaugeMetricFamily("forksync_dead_letter_alarm", "1 while any delivery is dead-lettered (work GitHub asked "
                                                              "for was not done); the reason is a label", labels=["reason"])
        # the alarm's line names the delivery's fork and quotes its error
        dead.add_metric([alarm[:200] if self.named else ""], 1.0 if alarm else 0.0)
        out.append(dead)
        return out

    def _forks(self, store: Store, now: float) -> list[dict]:
        """One row per fork with a status: ``{"repo", "reason", "blocked", "days", "backlog", "age",
        "stale", "alarm"}`` (``days``/``backlog`` None when never computed; ``age`` s, inf when never
        fetched; ``reason`` "" when not degraded)."""
        # forks an owner paused (suspended installation) or took away (uninstalled, removed): their
        # upstream is not fetched on purpose, which is no stale number to alarm on
        stopped = {p["fork"] for p in sync_store.paused_forks(store)} | set(sync_store.unfollowed(store))
        rows = []
        for st in sync_store.load_all_statuses(store):
            dead = q.dead_letters(store, st.repo, limit=1)
            reason = st.degraded() or (f"dead-lettered delivery {dead[0]['id']}: {dead[0]['reason']}" if dead else "")
            age = st.upstream_age_s(now)
            # the fork's own github.stale_after_s as its last sync recorded it, as the dashboard
            # and the status issue judge it
            limit = sync_store.recorded_stale_after_s(store, st.repo) or self.m.stale_after_s
            rows.append({"repo": st.repo, "reason": scrub(reason)[:200], "blocked": float(len(st.blocked)),
                         # never computed (the first fetch failed): no number, not a 0 that reads "in sync"
                         "days": st.days_behind if st.computed_at else None,
                         "backlog": st.backlog if st.computed_at else None,
                         "age": age if age is not None else float("inf"),
                         "stale": st.stale(limit, now) and st.repo not in stopped,
                         "alarm": st.alarm(self.m.alarm_after_s, now) and st.repo not in stopped})
        return rows

    @staticmethod
    def _folded(forks: list[dict]) -> list[GaugeMetricFamily]:
        """The forks' state as App-wide totals, naming none (the view served without a token)."""
        def total(name: str, doc: str, value: float) -> GaugeMetricFamily:
            fam = GaugeMetricFamily(name, doc)
            fam.add_metric([], value)
            return fam
        return [total("forksync_forks", "Forks with a sync status", len(forks)),
                total("forksync_forks_degraded", "Forks whose syncing is degraded (a blocked unit: GitHub "
                                                 "refused it, its pick failed or it waits for a person; or a "
                                                 "dead-lettered delivery)", sum(1 for f in forks if f["reason"])),
                total("forksync_forks_stale", "Forks whose last fetch of upstream failed or is too old",
                      sum(1 for f in forks if f["stale"])),
                total("forksync_forks_upstream_age_alarm", "Forks whose upstream was last seen longer ago than "
                                                           "the alarm age", sum(1 for f in forks if f["alarm"])),
                total("forksync_blocked_units", "Sync units blocked (GitHub refused them, their pick failed "
                                                "without a conflict, or they wait for a person), all forks",
                      sum(f["blocked"] for f in forks))]

    @staticmethod
    def _per_fork(forks: list[dict]) -> list[GaugeMetricFamily]:
        """Every fork's series, labelled ``repo`` (the view served to the token's bearer)."""
        fams = {
            "days": GaugeMetricFamily("forksync_days_behind", "Days Behind upstream (as of upstream_age)", labels=["repo"]),
            "backlog": GaugeMetricFamily("forksync_backlog", "Upstream commits not yet handled", labels=["repo"]),
            "age": GaugeMetricFamily("forksync_upstream_age_seconds", "Seconds since upstream was last fetched successfully", labels=["repo"]),
            "stale": GaugeMetricFamily("forksync_metrics_stale", "1 when the last fetch of upstream failed or "
                                                                 "upstream was last seen too long ago", labels=["repo"]),
            "alarm": GaugeMetricFamily("forksync_upstream_age_alarm", "1 when upstream was last seen longer ago than the alarm age", labels=["repo"]),
        }
        fams["degraded"] = GaugeMetricFamily(
            "forksync_degraded", "1 when syncing is degraded: a blocked unit (GitHub refused its push, PR or "
                                 "merge, its pick failed without a conflict, or it waits for a person) or a "
                                 "dead-lettered delivery of the "
                                 "fork; the reason is a label", labels=["repo", "reason"])
        fams["blocked"] = GaugeMetricFamily("forksync_blocked_units", "Sync units blocked (GitHub refused them, their pick "
                                            "failed without a conflict, or they wait for a person)",
                                            labels=["repo"])
        for f in forks:
            fams["degraded"].add_metric([f["repo"], f["reason"]], 1.0 if f["reason"] else 0.0)
            fams["blocked"].add_metric([f["repo"]], f["blocked"])
            if f["days"] is not None:
                fams["days"].add_metric([f["repo"]], f["days"])
                fams["backlog"].add_metric([f["repo"]], f["backlog"])
            fams["age"].add_metric([f["repo"]], f["age"])
            fams["stale"].add_metric([f["repo"]], 1.0 if f["stale"] else 0.0)
            fams["alarm"].add_metric([f["repo"]], 1.0 if f["alarm"] else 0.0)
        return list(fams.values())


__all__ = ["AppMetrics", "KNOWN_EVENTS"]
