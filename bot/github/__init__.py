"""The GitHub edge: the client (gidgethub, App auth, token cache, retries and write pacing),
merge and update-branch actions, helpers shared by the services (payload models, idempotent
comments, permissions), GitHub's size limits on bodies, titles and check-run texts (``limits``:
texts cut to fit), claims on a fork's objects across coroutines and worker processes (``claims``:
one writer at a time of a status issue, of a PR's comments, of the working repository), and the
fork's configuration read from its default branch.

May import: config, store, templating. Imported by: sync, validation, l2, commands, handlers, app.
"""
