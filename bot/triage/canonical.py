"""Canonical faults and generic lines (pure, data-driven): what makes a signature's identity.

* :data:`CANONICAL` — one identity per fault across wordings: a fault that tools, versions and
  wrappers say in several ways (``out of resource: shared memory, Required: …`` from triton,
  ``out of resource: triton_flex_attention Required: …`` from Inductor's autotuner, a pytest
  summary line cut after ``shared memory``; ``Value 'sm_120'`` / ``'sm_121a'`` for one GPU family
  the bundled ptxas does not know) gets one ``(type, line)``.
* :data:`GENERIC` — lines that say *that* something failed, not *what*: a fatal signal, an illegal
  address, an unspecified launch failure, a bare ``PassManager::run failed``, an exception
  without a message. Such a line is never an identity alone: the test (or, without one, the
  innermost frame, or the text itself) joins it, so two faults are split rather than merged.

Sources: triton's ``OutOfResources`` and ``PTXASError`` texts, Inductor's autotuner message,
ptxas's ``Value … is not defined for option 'gpu-name'``, torch's CUDA error strings and the
labelled corpora in ``tests/data/triage/`` (the rule for each entry is in its comment).
"""
from __future__ import annotations

import re

__all__ = ["CANONICAL", "GENERIC", "canonical", "is_generic", "arch_family"]


def arch_family(arch: str) -> str:
    """``sm_121a`` → ``sm_12x``, ``sm_90`` → ``sm_9x``: one GPU generation (a toolchain that lacks
    one of its members lacks the others of its release; ``sm_80`` and ``sm_90`` stay apart)."""
    digits = arch[3:].rstrip("af")
    return f"sm_{digits[:-1]}x" if len(digits) >= 2 else arch


#: (literal the chosen line must hold, pattern over ``"<type>: <raw line>"``, type, line template).
#: The template's ``{arch}`` is the ``arch`` group through :func:`arch_family`.
CANONICAL: tuple[tuple[str, re.Pattern, str, str], ...] = (
    # triton's OutOfResources for shared memory, in its own words or Inductor's (the resource is
    # then the kernel's name, the limit is the shared-memory limit), however the sizes are written
    ("out of resource", re.compile(r"out of resource: (?:shared memory|(?!threads|registers)[^\s,]+ Required: ?\d+,? Hardware limit)"),
     "OutOfResources", "out of resource: shared memory"),
    # ptxas older than the GPU: one identity per GPU generation
    ("is not defined for option 'gpu-name'",
     re.compile(r"Value '(?P<arch>sm_\d+[af]?)' is not defined for option 'gpu-name'"),
     "ptxas", "Value '{arch}' is not defined for option 'gpu-name'"),
    # torch without a usable triton: the first sentence names it, the rest varies by version
    ("Cannot find a working triton installation", re.compile(r"Cannot find a working triton installation"),
     "RuntimeError", "Cannot find a working triton installation"),
    # torch's CUDA OOM: the tail (capacity, free, reserved, advice) varies by version and by run
    ("CUDA out of memory", re.compile(r"CUDA out of memory"), "OutOfMemoryError", "CUDA out of memory"),
    # ptxas that failed without its message in the text, in triton's words or as the subprocess
    # error around it: only the exit status is known (generic below: the test joins it)
    ("failed with error code", re.compile(r"`ptxas` failed with error code (?P<code>\d+)"),
     "ptxas", "ptxas failed with exit status {code}"),
    ("returned non-zero exit status", re.compile(r"ptxas(?:\.exe)?'.*returned non-zero exit status (?P<code>\d+)"),
     "ptxas", "ptxas failed with exit status {code}"),
)

#: Generic lines, over ``"<type>: <masked line>"`` (after the canonical step).
GENERIC: re.Pattern = re.compile(
    r"^[\w.()\[\]]+: ?$"                                       # an exception (or outcome) without a message
    r"|^(?:CUDA|HIP)Error: (?:CUDA|HIP) error: (?:an illegal memory access was encountered|unspecified launch failure"
    r"|misaligned address|an illegal instruction was encountered|invalid argument|Code: \d+, Messsage: invalid argument"
    r"|unknown error|invalid program counter|device-side assert triggered|warp illegal address)"
    r"|^RuntimeError: PassManager::run failed$"
    r"|^ptxas: ptxas failed with exit status \d+$"
    r"|^CompilationError: (?:at <pos>:?)?$"                    # a CompilationError whose cause was not printed
)


def canonical(typ: str, raw: str) -> tuple[str, str] | None:
    """The canonical ``(type, line)`` of a chosen line, or None when no entry matches."""
    for literal, rx, ctype, template in CANONICAL:
        if literal in raw:
            m = rx.search(raw)
            if m:
                groups = m.groupdict()
                if "arch" in groups:
                    groups["arch"] = arch_family(groups["arch"])
                return ctype, template.format(**groups) if groups else template
    return None


#: the types a :data:`GENERIC` line other than an empty message can have
_GENERIC_TYPES = frozenset({"CUDAError", "HIPError", "RuntimeError", "CompilationError", "ptxas"})


def is_generic(typ: str, line: str) -> bool:
    """Whether ``"<type>: <line>"`` (masked) says only that something failed."""
    if not line:
        return True
    return typ in _GENERIC_TYPES and GENERIC.match(f"{typ}: {line}") is not None
