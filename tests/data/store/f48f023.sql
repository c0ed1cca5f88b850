BEGIN TRANSACTION;
CREATE TABLE "agent_token_usage" (
   "day" TEXT,
   "agent" TEXT,
   "model" TEXT,
   "calls" INTEGER,
   "input_tokens" INTEGER,
   "output_tokens" INTEGER,
   PRIMARY KEY ("day", "agent")
);
INSERT INTO "agent_token_usage" VALUES('agent_token_usage-day','agent_token_usage-agent','agent_token_usage-model',7,7,7);
CREATE TABLE "command_runs" (
   "key" TEXT PRIMARY KEY,
   "repo" TEXT,
   "comment_id" INTEGER,
   "line" TEXT,
   "by" TEXT,
   "result" TEXT,
   "time" REAL
);
INSERT INTO "command_runs" VALUES('command_runs-key','command_runs-repo',7,'command_runs-line','command_runs-by','command_runs-result',1.5);
CREATE TABLE "commit_analysis" (
   "sha" TEXT PRIMARY KEY,
   "version" INTEGER,
   "data" TEXT
);
INSERT INTO "commit_analysis" VALUES('commit_analysis-sha',7,'commit_analysis-data');
CREATE TABLE "fork_configs" (
   "repo" TEXT PRIMARY KEY,
   "blob_sha" TEXT,
   "text" TEXT
);
INSERT INTO "fork_configs" VALUES('fork_configs-repo','fork_configs-blob_sha','fork_configs-text');
CREATE TABLE "l2_points" (
   "id" INTEGER PRIMARY KEY,
   "benchmark" TEXT,
   "impl" TEXT,
   "metric" TEXT,
   "shape" TEXT,
   "dtype" TEXT,
   "platform" TEXT,
   "unit" TEXT,
   "sha" TEXT,
   "seq" INTEGER,
   "time" INTEGER,
   "value" REAL,
   "repeats_json" TEXT,
   "ok" INTEGER
);
INSERT INTO "l2_points" VALUES(7,'l2_points-benchmark','l2_points-impl','l2_points-metric','l2_points-shape','l2_points-dtype','l2_points-platform','l2_points-unit','l2_points-sha',7,7,1.5,'l2_points-repeats_json',7);
CREATE TABLE "l2_regressions" (
   "key" TEXT PRIMARY KEY,
   "repo" TEXT,
   "series" TEXT,
   "good" TEXT,
   "bad" TEXT,
   "status" TEXT,
   "culprit" TEXT,
   "issue" INTEGER,
   "backout_pr" INTEGER,
   "time" REAL
);
INSERT INTO "l2_regressions" VALUES('l2_regressions-key','l2_regressions-repo','l2_regressions-series','l2_regressions-good','l2_regressions-bad','l2_regressions-status','l2_regressions-culprit',7,7,1.5);
CREATE TABLE "l2_runs" (
   "key" TEXT PRIMARY KEY,
   "repo" TEXT,
   "sha" TEXT,
   "seq" INTEGER,
   "time" REAL
);
INSERT INTO "l2_runs" VALUES('l2_runs-key','l2_runs-repo','l2_runs-sha',7,1.5);
CREATE TABLE "l3_runs" (
   "id" INTEGER PRIMARY KEY,
   "repo" TEXT,
   "pr" INTEGER,
   "head_sha" TEXT,
   "workload" TEXT,
   "platform" TEXT,
   "requested_by" TEXT,
   "requested_at" INTEGER,
   "status" TEXT,
   "verdict" TEXT,
   "result_url" TEXT,
   "finished_at" INTEGER
);
INSERT INTO "l3_runs" VALUES(7,'l3_runs-repo',7,'l3_runs-head_sha','l3_runs-workload','l3_runs-platform','l3_runs-requested_by',7,'l3_runs-status','l3_runs-verdict','l3_runs-result_url',7);
CREATE TABLE "nightly_followups" (
   "key" TEXT PRIMARY KEY,
   "repo" TEXT,
   "cause" TEXT,
   "issue" INTEGER,
   "bisected" INTEGER,
   "culprit" TEXT,
   "fix" TEXT,
   "updated_at" INTEGER
);
INSERT INTO "nightly_followups" VALUES('nightly_followups-key','nightly_followups-repo','nightly_followups-cause',7,7,'nightly_followups-culprit','nightly_followups-fix',7);
CREATE TABLE "nightly_runs" (
   "key" TEXT PRIMARY KEY,
   "repo" TEXT,
   "sha" TEXT,
   "dispatched_at" REAL,
   "alarm_issue" INTEGER
);
INSERT INTO "nightly_runs" VALUES('nightly_runs-key','nightly_runs-repo','nightly_runs-sha',1.5,7);
CREATE TABLE "pin_history" (
   "id" INTEGER PRIMARY KEY,
   "recorded_at" INTEGER,
   "as_of" INTEGER,
   "fork_tip" TEXT,
   "upstream_tip" TEXT,
   "data" TEXT
);
INSERT INTO "pin_history" VALUES(7,7,7,'pin_history-fork_tip','pin_history-upstream_tip','pin_history-data');
CREATE TABLE "plan_predictions" (
   "key" TEXT PRIMARY KEY,
   "ours_tree" TEXT,
   "commit" TEXT,
   "flags" INTEGER,
   "outcome" TEXT,
   "conflicts" TEXT,
   "result_tree" TEXT,
   "detail" TEXT
);
INSERT INTO "plan_predictions" VALUES('plan_predictions-key','plan_predictions-ours_tree','plan_predictions-commit',7,'plan_predictions-outcome','plan_predictions-conflicts','plan_predictions-result_tree','plan_predictions-detail');
CREATE TABLE "plan_symbols" (
   "key" TEXT PRIMARY KEY,
   "version" INTEGER,
   "symbols" TEXT
);
INSERT INTO "plan_symbols" VALUES('plan_symbols-key',7,'plan_symbols-symbols');
CREATE TABLE "queue_workers" (
   "worker_id" TEXT PRIMARY KEY,
   "started_at" REAL,
   "beat_at" REAL
);
INSERT INTO "queue_workers" VALUES('queue_workers-worker_id',1.5,1.5);
CREATE TABLE "retest_grants" (
   "key" TEXT PRIMARY KEY,
   "repo" TEXT,
   "pr" INTEGER,
   "head_sha" TEXT,
   "by" TEXT,
   "time" REAL
);
INSERT INTO "retest_grants" VALUES('retest_grants-key','retest_grants-repo',7,'retest_grants-head_sha','retest_grants-by',1.5);
CREATE TABLE "signoffs" (
   "id" INTEGER PRIMARY KEY,
   "repo" TEXT,
   "pr" INTEGER,
   "head_sha" TEXT,
   "target" TEXT,
   "by" TEXT,
   "time" INTEGER,
   "comment_url" TEXT
);
INSERT INTO "signoffs" VALUES(7,'signoffs-repo',7,'signoffs-head_sha','signoffs-target','signoffs-by',7,'signoffs-comment_url');
CREATE TABLE "suite_results" (
   "key" TEXT PRIMARY KEY,
   "repo" TEXT,
   "pr" INTEGER,
   "sha" TEXT,
   "suite" TEXT,
   "platform" TEXT,
   "level" TEXT,
   "status" TEXT,
   "verdict" TEXT,
   "failing_json" TEXT,
   "reason" TEXT,
   "check_run_id" INTEGER,
   "check_url" TEXT,
   "backend" TEXT,
   "request_id" TEXT,
   "result_json" TEXT,
   "updated_at" REAL
);
INSERT INTO "suite_results" VALUES('suite_results-key','suite_results-repo',7,'suite_results-sha','suite_results-suite','suite_results-platform','suite_results-level','suite_results-status','suite_results-verdict','suite_results-failing_json','suite_results-reason',7,'suite_results-check_url','suite_results-backend','suite_results-request_id','suite_results-result_json',1.5);
CREATE TABLE "sync_branches" (
   "key" TEXT PRIMARY KEY,
   "repo" TEXT,
   "branch" TEXT,
   "unit_id" TEXT,
   "kind" TEXT,
   "pushed_tip" TEXT,
   "verified_tip" TEXT,
   "pr" INTEGER,
   "state" TEXT,
   "shas_json" TEXT,
   "base_sha" TEXT,
   "conflict_sha" TEXT,
   "blocked_reason" TEXT,
   "blocked_requires" TEXT,
   "blocked_path" TEXT,
   "blocked_step" TEXT,
   "blocked_at" REAL,
   "blocked_tip" TEXT
);
INSERT INTO "sync_branches" VALUES('sync_branches-key','sync_branches-repo','sync_branches-branch','sync_branches-unit_id','sync_branches-kind','sync_branches-pushed_tip','sync_branches-verified_tip',7,'sync_branches-state','sync_branches-shas_json','sync_branches-base_sha','sync_branches-conflict_sha','sync_branches-blocked_reason','sync_branches-blocked_requires','sync_branches-blocked_path','sync_branches-blocked_step',1.5,'sync_branches-blocked_tip');
CREATE TABLE "sync_status" (
   "repo" TEXT PRIMARY KEY,
   "upstream" TEXT,
   "upstream_head" TEXT,
   "fork_head" TEXT,
   "frontier" TEXT,
   "contiguous_pin" TEXT,
   "days_behind" REAL,
   "backlog" INTEGER,
   "not_reached" INTEGER,
   "upstream_seen_at" REAL,
   "computed_at" REAL,
   "last_fetch_at" REAL,
   "last_fetch_error" TEXT,
   "held" INTEGER,
   "deferred_json" TEXT,
   "units_json" TEXT,
   "blocked_json" TEXT,
   "etag" TEXT
);
INSERT INTO "sync_status" VALUES('sync_status-repo','sync_status-upstream','sync_status-upstream_head','sync_status-fork_head','sync_status-frontier','sync_status-contiguous_pin',1.5,7,7,1.5,1.5,1.5,'sync_status-last_fetch_error',7,'sync_status-deferred_json','sync_status-units_json','sync_status-blocked_json','sync_status-etag');
CREATE TABLE "tracked_forks" (
   "fork" TEXT PRIMARY KEY,
   "upstream" TEXT,
   "upstream_ref" TEXT,
   "installation_id" INTEGER,
   "poll_interval_s" INTEGER,
   "last_poll_at" REAL
);
INSERT INTO "tracked_forks" VALUES('tracked_forks-fork','tracked_forks-upstream','tracked_forks-upstream_ref',7,7,1.5);
CREATE TABLE "triage_green" (
   "test" TEXT PRIMARY KEY,
   "commit_sha" TEXT,
   "time" INTEGER
);
INSERT INTO "triage_green" VALUES('triage_green-test','triage_green-commit_sha',7);
CREATE TABLE "triage_runs" (
   "run" TEXT PRIMARY KEY,
   "processed_at" INTEGER,
   "actions" TEXT
);
INSERT INTO "triage_runs" VALUES('triage_runs-run',7,'triage_runs-actions');
CREATE TABLE "triage_tracked" (
   "key" TEXT PRIMARY KEY,
   "data" TEXT,
   "updated_at" INTEGER
);
INSERT INTO "triage_tracked" VALUES('triage_tracked-key','triage_tracked-data',7);
CREATE TABLE "webhook_deliveries" (
   "id" TEXT PRIMARY KEY,
   "delivery_id" TEXT,
   "hook_id" TEXT,
   "event" TEXT,
   "action" TEXT,
   "installation_id" INTEGER,
   "repo" TEXT,
   "sender" TEXT,
   "body" BLOB,
   "content_type" TEXT,
   "state" TEXT,
   "attempts" INTEGER,
   "next_attempt_at" REAL,
   "lease_owner" TEXT,
   "lease_until" REAL,
   "received_at" REAL,
   "started_at" REAL,
   "finished_at" REAL,
   "redeliveries" INTEGER,
   "last_error" TEXT,
   "dead_reason" TEXT,
   "outcome" TEXT
);
INSERT INTO "webhook_deliveries" VALUES('webhook_deliveries-id','webhook_deliveries-delivery_id','webhook_deliveries-hook_id','webhook_deliveries-event','webhook_deliveries-action',7,'webhook_deliveries-repo','webhook_deliveries-sender',X'0001','webhook_deliveries-content_type','webhook_deliveries-state',7,1.5,'webhook_deliveries-lease_owner',1.5,1.5,1.5,1.5,7,'webhook_deliveries-last_error','webhook_deliveries-dead_reason','webhook_deliveries-outcome');
CREATE INDEX "idx_webhook_deliveries_state_next_attempt_at"
    ON "webhook_deliveries" ("state", "next_attempt_at");
CREATE INDEX "idx_webhook_deliveries_received_at"
    ON "webhook_deliveries" ("received_at");
CREATE INDEX "idx_sync_branches_repo_unit_id"
    ON "sync_branches" ("repo", "unit_id");
CREATE INDEX "idx_tracked_forks_upstream"
    ON "tracked_forks" ("upstream");
CREATE INDEX "idx_pin_history_as_of"
    ON "pin_history" ("as_of");
CREATE INDEX "idx_nightly_followups_repo"
    ON "nightly_followups" ("repo");
CREATE INDEX "idx_suite_results_repo_sha"
    ON "suite_results" ("repo", "sha");
CREATE INDEX "idx_suite_results_repo_pr"
    ON "suite_results" ("repo", "pr");
CREATE INDEX "idx_suite_results_request_id"
    ON "suite_results" ("request_id");
CREATE INDEX "idx_l3_runs_repo_pr"
    ON "l3_runs" ("repo", "pr");
CREATE INDEX "idx_l3_runs_status"
    ON "l3_runs" ("status");
CREATE INDEX "idx_signoffs_repo_pr"
    ON "signoffs" ("repo", "pr");
CREATE INDEX "idx_nightly_runs_repo"
    ON "nightly_runs" ("repo");
CREATE INDEX "idx_retest_grants_repo_pr"
    ON "retest_grants" ("repo", "pr");
CREATE INDEX "idx_l2_points_benchmark_impl_metric_shape_dtype_platform"
    ON "l2_points" ("benchmark", "impl", "metric", "shape", "dtype", "platform");
CREATE UNIQUE INDEX "idx_l2_points_benchmark_impl_metric_shape_dtype_platform_sha"
    ON "l2_points" ("benchmark", "impl", "metric", "shape", "dtype", "platform", "sha");
CREATE INDEX "idx_l2_runs_repo"
    ON "l2_runs" ("repo");
CREATE INDEX "idx_l2_regressions_repo"
    ON "l2_regressions" ("repo");
COMMIT;
