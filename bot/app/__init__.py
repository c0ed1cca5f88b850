"""The running App: webhook intake (verify, enqueue), the durable delivery queue, workers,
dispatch to the handlers, the runtime that builds the services once, metrics, and schedules
(poller ticks, nightly, L2, reconcile).

May import: handlers and everything below them. Imported by: cli, demo.
"""
