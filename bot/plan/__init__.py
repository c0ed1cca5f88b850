"""The risk partition: pending upstream commits into large low-risk bundles and ordered risky chains.

Owns the pure decision (:func:`bot.plan.partition.build_plan`, its I/O injected as a
``PickPredictor`` and a symbol lookup), chain stacking, pick predictions (pygit2 in-memory
3-way merges, cached in SQLite), the plan helper process, tree-sitter symbols and their index,
and the planner that wires them.

May import: model, store (and pygit2, tree-sitter). Never git subprocesses, GitHub or services.
Imported by: sync, cli.
"""
