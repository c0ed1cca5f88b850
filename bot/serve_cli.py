"""Sub-commands of this concern (stub: filled in by its owner)."""


def register(sub, common) -> None:
    pass
