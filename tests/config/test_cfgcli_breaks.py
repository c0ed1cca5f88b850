"""forksync.yml values that validate but can never do what the user wrote: an area's owners and
paths written the way other tools (CODEOWNERS, shells) spell them. Each is silently inert today;
the configuration should either take the usual spelling or say, at its line, why it is wrong."""
from __future__ import annotations

import pytest

from bot.config.forksync import ConfigError, parse_config_text
from bot.core.logins import among


@pytest.mark.parametrize("owner", ["@alice", "@Alice"])
def test_a_codeowners_style_owner_is_taken_or_refused(owner):
    """``owners: ["@alice"]`` — how CODEOWNERS (which the same fork keeps next to forksync.yml)
    names a person. It validates, and then alice's approval and ``/forksync signoff`` never
    count (owners are compared with the login GitHub gives, ``alice``): the gate waits for an
    owner who already approved. The configuration should either read ``@alice`` as ``alice`` or
    refuse it at its line, naming ``areas[tlx].owners``."""
    text = f"areas:\n  - name: tlx\n    paths: [third_party/tlx/**]\n    owners: [{owner!r}]\n"
    try:
        cfg = parse_config_text(text, "forksync.yml")
    except ConfigError as e:
        assert "areas[tlx].owners" in str(e) and "forksync.yml:4:" in str(e)
        return
    assert among("alice", cfg.areas[0].owners), f"{owner!r} accepted, but the account alice is not among the owners"


@pytest.mark.parametrize("glob", ["./third_party/tlx/**", "/third_party/tlx/**"])
def test_an_area_path_written_from_the_repository_root_matches_or_is_refused(glob):
    """``paths: ["./third_party/tlx/**"]`` or ``["/third_party/tlx/**"]`` (as a shell, or
    .gitignore's anchored patterns, write a path from the root): it validates, and then matches
    no path git reports (``third_party/tlx/…``, no leading ``./`` or ``/``). For a ``divergent``
    area that is silent and costly: upstream commits touching the fork's own code are no longer
    routed to chains but predicted into low-risk bundles. The configuration should either match
    ``third_party/tlx/x.cpp`` with it or refuse it at its line, naming ``areas[tlx].paths``."""
    text = f"areas:\n  - name: tlx\n    divergent: true\n    paths: [{glob!r}]\n"
    try:
        cfg = parse_config_text(text, "forksync.yml")
    except ConfigError as e:
        assert "areas[tlx].paths" in str(e) and "forksync.yml:4:" in str(e)
        return
    assert cfg.areas[0].matches_path("third_party/tlx/lib/Dialect.cpp"), f"{glob!r} accepted but matches nothing"
