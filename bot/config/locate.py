"""Where a configuration problem is: YAML positions, key paths by name, "did you mean".

A user fixes a configuration in an editor, so every problem names the file, the line and the
column (1-based, as editors count) and the key path as the user wrote it: a list item that has a
``name`` is named by it (``areas[autows].divergent``, not ``areas.0.divergent``). Positions come
from PyYAML's composed node tree (``yaml.compose``; every node keeps its start mark), read next to
the data that ``yaml.safe_load`` builds from the same text.

Pure functions over a node tree and pydantic error locations; nothing here reads a file.
"""
from __future__ import annotations

import difflib
import types
import typing
from typing import Any, Union

import yaml
from pydantic import BaseModel

Loc = tuple[Any, ...]          # a pydantic error location: keys (str) and list indices (int)


def compose(text: str) -> yaml.Node | None:
    """The YAML node tree of ``text`` (None for an empty document). Raises ``yaml.YAMLError``."""
    return yaml.compose(text, Loader=yaml.SafeLoader)


def node_at(root: yaml.Node | None, loc: Loc, key: bool = False) -> yaml.Node | None:
    """The deepest node of ``root`` along ``loc``: the value node at the full path (its key node
    when ``key`` is true), else the nearest enclosing node that exists (a missing field is reported
    where its mapping starts)."""
    node, found = root, root
    for i, part in enumerate(loc):
        last = i == len(loc) - 1
        if isinstance(node, yaml.MappingNode):
            nxt = None
            for k, v in node.value:
                if isinstance(k, yaml.ScalarNode) and k.value == str(part):
                    nxt = k if (key and last) else v
            node = nxt
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
            node = node.value[part]
        else:
            node = None
        if node is None:
            return found
        found = node
    return found


def position(root: yaml.Node | None, loc: Loc, key: bool = False) -> tuple[int, int] | None:
    """``(line, column)``, both 1-based, of :func:`node_at`; None without a tree."""
    node = node_at(root, loc, key)
    if node is None:
        return None
    return node.start_mark.line + 1, node.start_mark.column + 1


def named_path(data: Any, loc: Loc) -> str:
    """``loc`` as the user reads it: keys joined by ``.``, a list item as ``[name]`` when it is a
    mapping with a string ``name`` (areas, suites, trailers), else ``[index]``.

    ``named_path({"areas": [{"name": "autows"}]}, ("areas", 0, "divergent"))`` →
    ``"areas[autows].divergent"``."""
    out = ""
    node = data
    for part in loc:
        if isinstance(part, int):
            item = node[part] if isinstance(node, list) and 0 <= part < len(node) else None
            name = item.get("name") if isinstance(item, dict) else None
            out += f"[{name}]" if isinstance(name, str) and name else f"[{part}]"
            node = item
        else:
            out += f".{part}" if out else str(part)
            node = node.get(part) if isinstance(node, dict) else None
    return out


def parse_loc(path: str) -> Loc:
    """A dotted path with numeric list indices (``suites.0.areas``) as a location tuple."""
    return tuple(int(p) if p.isdigit() else p for p in path.split(".")) if path else ()


def _unwrap(tp: Any) -> list[Any]:
    """The model classes and containers a field annotation can hold (Optional/Union unwrapped)."""
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        return [t for a in typing.get_args(tp) for t in _unwrap(a)]
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(tp)[0])
    return [tp]


def model_at(model: type[BaseModel], loc: Loc) -> type[BaseModel] | None:
    """The pydantic model whose fields are valid at ``loc`` (keys and indices under ``model``),
    or None when ``loc`` leaves the models (a free-form mapping)."""
    current: Any = model
    for part in loc:
        candidates = _unwrap(current)
        nxt = None
        for c in candidates:
            origin = typing.get_origin(c)
            if isinstance(part, int) and origin in (list, tuple):
                nxt = typing.get_args(c)[0]
            elif isinstance(part, str) and isinstance(c, type) and issubclass(c, BaseModel) and part in c.model_fields:
                nxt = c.model_fields[part].annotation
            elif isinstance(part, str) and origin is dict:
                nxt = typing.get_args(c)[1]
            if nxt is not None:
                break
        if nxt is None:
            return None
        current = nxt
    for c in _unwrap(current):
        if isinstance(c, type) and issubclass(c, BaseModel):
            return c
    return None


def unknown_key_reason(model: type[BaseModel], loc: Loc) -> str:
    """The reason for an unknown key at ``loc``: "did you mean" the closest known key (difflib,
    cutoff 0.6), else the known keys."""
    key = str(loc[-1])
    owner = model_at(model, loc[:-1])
    known = sorted(owner.model_fields) if owner else []
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    if close:
        return f"unknown key `{key}`; did you mean `{close[0]}`?"
    if known:
        return f"unknown key `{key}`; known keys here: {', '.join(known)}"
    return f"unknown key `{key}`"


def duplicate_keys(root: yaml.Node | None) -> list[tuple[Loc, str, tuple[int, int]]]:
    """Keys given twice in one mapping (YAML loaders silently keep the last one, so an edit can
    be lost): ``[(loc of the second key, reason, (line, column)), …]``."""
    out: list[tuple[Loc, str, tuple[int, int]]] = []

    def walk(node: yaml.Node | None, loc: Loc) -> None:
        if isinstance(node, yaml.MappingNode):
            seen: dict[str, int] = {}
            for k, v in node.value:
                if isinstance(k, yaml.ScalarNode):
                    if k.value in seen:
                        out.append((loc + (k.value,), f"key `{k.value}` is given twice (first on line {seen[k.value]}); "
                                    "the second one would silently win", (k.start_mark.line + 1, k.start_mark.column + 1)))
                    else:
                        seen[k.value] = k.start_mark.line + 1
                    walk(v, loc + (k.value,))
        elif isinstance(node, yaml.SequenceNode):
            for i, v in enumerate(node.value):
                walk(v, loc + (i,))

    walk(root, ())
    return out
