"""``forksync.yml``: the typed configuration, and the tables and merge helpers that layers above share.

* :mod:`bot.config.forksync` — the whole file's model (upstream/fork, provenance, isolated picks,
  areas, size caps, renames, ``resolve``) and its loader with file/line/key errors (positions and
  "did you mean" from :mod:`bot.config.locate`);
* one pydantic model per remaining section: :mod:`bot.config.github`, :mod:`bot.config.suites`,
  :mod:`bot.config.gate`, :mod:`bot.config.triage`, :mod:`bot.config.agents`,
  :mod:`bot.config.schedules`;
* :mod:`bot.config.reference` — the generator of docs/config-reference.md;
* :mod:`bot.config.app_manifest` — the App's permissions and webhook events (pure data);
* :mod:`bot.config.infra` — the phrases of infrastructure faults, kept here so that ``gpu_runner``
  (which reads them through :mod:`bot.config.suites`) imports with pydantic and pyyaml alone;
* what forksync's in-memory merges share across the planner, apply and the resolve replay:
  :mod:`bot.config.renames` (rename options), :mod:`bot.config.trees` (tree edits and look-ups),
  :mod:`bot.config.attributes` (the fork tree's ``merge`` attribute, and the picks git stops on
  that libgit2 merges) and :mod:`bot.config.objects` (new objects written as one pack);
* :mod:`bot.config.merge_file` — one file's 3-way merge with diff3 markers (``git merge-file``),
  shared by apply's conflict commits, the resolve rules and the conflict agent's prompt (the
  planner, which runs no processes, never imports it).

May import: nothing of the project (pydantic, yaml, croniter; pygit2 in renames, trees, attributes
and objects; subprocess in merge_file).
Imported by: everything above it.
"""
