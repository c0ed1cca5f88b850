"""GitHub's published contract, as the fake holds the bot (and itself) to it.

The REST description is ``spec/rest.json`` (the shared data pack's subset of GitHub's OpenAPI
description plus the operations listed in ``spec/build.py``); webhook payload schemas are
``spec/webhooks.json``. Both are loaded once per process (≈ 2 s for REST).

- :func:`operations` maps ``operationId → (METHOD, path template)``: the fake's routes are built
  from it, so a route exists only for an operation GitHub documents.
- :class:`Contract.check_request` validates one incoming request with openapi-core; multi-segment
  path parameters (``{ref}``, ``{path}``, ``{basehead}``) are percent-encoded first, because
  openapi-core matches ``heads%2Fx`` but not ``heads/x`` (data-pack README, conformance notes);
  the host is GitHub's (``https://api.github.com``) so the spec's ``servers`` matches.
- :class:`Contract.check_response` validates what the fake answers.
- :func:`fill` completes a partial object with schema-valid placeholders for the required fields
  the fake does not model, so responses pass GitHub's response schemas (GitHub's own examples do
  not: 12 of 70 fail, data-pack README).
- :class:`Contract.check_webhook` validates an outgoing webhook payload with ``OAS30Validator``
  (``nullable`` needs OAS 3.0 semantics, plain jsonschema rejects it).
"""
from __future__ import annotations

import functools
import json
import re
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SPEC_DIR = Path(__file__).resolve().parent / "spec"
REST_SPEC = SPEC_DIR / "rest.json"
WEBHOOK_SPEC = SPEC_DIR / "webhooks.json"
GITHUB_HOST = "https://api.github.com"
MULTI_SEGMENT = frozenset({"ref", "path", "basehead"})
METHODS = ("get", "put", "post", "patch", "delete")


@functools.lru_cache(maxsize=None)
def rest_document() -> dict:
    """The REST description as plain JSON (loaded once)."""
    return json.loads(REST_SPEC.read_text())


@functools.lru_cache(maxsize=None)
def webhook_document() -> dict:
    return json.loads(WEBHOOK_SPEC.read_text())


_NULL_BRANCH = {"type": "string", "nullable": True, "enum": [None]}


def _nullable_alternatives(node):
    """OAS 3.0 ``nullable: true`` beside ``oneOf``/``anyOf`` (no ``type``) means "or null", but
    openapi-schema-validator only honours ``nullable`` inside a ``type`` check, so ``null`` fails
    every alternative (e.g. ``commit.author`` of repos/get-commit, which GitHub sends as null for
    an author without an account). Add an explicit null-only alternative. Likewise a nullable
    ``enum`` that does not list ``null`` (``check_run.conclusion`` while queued) gets ``null``
    added. Nothing else changes."""
    if isinstance(node, dict):
        for key in ("oneOf", "anyOf"):
            if node.get("nullable") and key in node and "type" not in node:
                node[key] = [*node[key], dict(_NULL_BRANCH)]
        if node.get("nullable") and isinstance(node.get("enum"), list) and None not in node["enum"]:
            node["enum"] = [*node["enum"], None]
        for v in node.values():
            _nullable_alternatives(v)
    elif isinstance(node, list):
        for v in node:
            _nullable_alternatives(v)
    return node


@functools.lru_cache(maxsize=None)
def _openapi():
    from openapi_core import Config, OpenAPI

    # the description itself is checked once by tests/fakegithub/test_spec.py; re-checking it
    # here would cost ≈ 5 s per process
    return OpenAPI.from_dict(_nullable_alternatives(json.loads(REST_SPEC.read_text())),
                             config=Config(spec_validator_cls=None))


@functools.lru_cache(maxsize=None)
def operations() -> dict[str, tuple[str, str]]:
    """``{operationId: (METHOD, "/repos/{owner}/{repo}/…")}`` for every documented operation."""
    out = {}
    for path, item in rest_document()["paths"].items():
        for method in METHODS:
            op = item.get(method)
            if op:
                out[op["operationId"]] = (method.upper(), path)
    return out


@functools.lru_cache(maxsize=None)
def _path_regexes() -> list[tuple[re.Pattern, str, str]]:
    """(regex, METHOD, operationId) for matching a raw path to an operation."""
    out = []
    for op_id, (method, path) in operations().items():
        rx = re.sub(r"\\\{(\w+)\\\}", lambda m: "(?P<%s>%s)" % (m[1], ".+" if m[1] in MULTI_SEGMENT else "[^/]+"),
                    re.escape(path))
        out.append((re.compile("^" + rx + "$"), method, op_id))
    # specific (more literal characters) first
    out.sort(key=lambda t: -len(re.sub(r"\(\?P<\w+>[^)]*\)", "", t[0].pattern)))
    return out


def find_operation(method: str, path: str) -> str | None:
    """The operationId documented for ``METHOD path`` (path already decoded), or None."""
    for rx, m, op_id in _path_regexes():
        if m == method.upper() and rx.match(path):
            return op_id
    return None


def spec_path(template: str, params: dict[str, str]) -> str:
    """Fill an OpenAPI path template, percent-encoding every value (``/`` included)."""
    return re.sub(r"\{(\w+)\}", lambda m: urllib.parse.quote(str(params[m[1]]), safe=""), template)


def _str(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:  # noqa: BLE001 - some openapi-core errors cannot render non-UTF-8 bodies
        return type(exc).__name__


def _error_text(exc: BaseException) -> str:
    parts = [_str(exc) if len(_str(exc)) < 300 else type(exc).__name__]
    cause = exc.__cause__ or exc.__context__
    while cause is not None and len(parts) < 4:
        errs = getattr(cause, "schema_errors", None)
        if errs:
            parts.extend(f"{'/'.join(str(p) for p in e.absolute_path) or '<body>'}: {e.message}" for e in errs)
        else:
            text = _str(cause)
            parts.append(text if len(text) < 300 else type(cause).__name__)
        cause = cause.__cause__ or cause.__context__
    seen, out = set(), []
    for p in parts:
        if p and p not in seen:
            seen.add(p)
            out.append(p)
    return "; ".join(out)[:2000]


@dataclass
class Violation:
    """One breach of GitHub's contract seen by the fake.

    ``kind``: ``unknown-operation`` (the bot called something GitHub does not document),
    ``invalid-request`` (documented, but the request breaks the schema), ``unimplemented`` (GitHub
    documents it, the fake does not serve it yet), ``invalid-response`` / ``invalid-webhook``
    (the fake itself drifted from GitHub's shapes)."""

    kind: str
    method: str
    path: str
    operation: str | None
    detail: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.method} {self.path} ({self.operation or 'no operation'}): {self.detail}"


@dataclass
class Contract:
    validate_responses: bool = True
    violations: list[Violation] = field(default_factory=list)

    def record(self, kind: str, method: str, path: str, operation: str | None, detail: str) -> Violation:
        v = Violation(kind, method, path, operation, detail)
        self.violations.append(v)
        return v

    @staticmethod
    def _request(method: str, template: str, params: dict[str, str], query, body: bytes | None,
                 headers: dict[str, str], content_type: str | None):
        from openapi_core.testing import MockRequest

        return MockRequest(GITHUB_HOST, method.lower(), spec_path(template, params),
                           args=dict(query or {}), headers=headers, data=body or None,
                           content_type=(content_type or "application/json").split(";")[0].strip())

    def check_request(self, method: str, template: str, params: dict[str, str], query, body: bytes | None,
                      headers: dict[str, str], content_type: str | None) -> str | None:
        """Validate a request against the documented operation; returns the error text or None."""
        req = self._request(method, template, params, query, body, headers, content_type)
        try:
            _openapi().validate_request(req)
        except Exception as e:  # openapi-core raises a family of ValidationError subclasses
            return _error_text(e)
        return None

    def check_response(self, method: str, template: str, params: dict[str, str], query,
                       status: int, body: bytes, content_type: str | None) -> str | None:
        from openapi_core.testing import MockResponse

        if not self.validate_responses:
            return None
        req = self._request(method, template, params, query, None, {}, None)
        resp = MockResponse(body or b"", status_code=status,
                            content_type=(content_type or "application/json").split(";")[0].strip())
        try:
            _openapi().validate_response(req, resp)
        except Exception as e:
            return _error_text(e)
        return None

    def check_component(self, component: str, data: Any) -> str | None:
        """Validate ``data`` against ``#/components/schemas/<component>`` of the REST description."""
        errors = list(_component_validator(component).iter_errors(data))
        if not errors:
            return None
        return "; ".join(f"{'/'.join(str(p) for p in e.absolute_path) or '<body>'}: {e.message[:200]}"
                         for e in errors[:8])

    def check_webhook(self, name: str, payload: Any) -> str | None:
        """Validate a webhook payload against ``x-webhooks[name]`` (e.g. ``pull-request-opened``)."""
        validator = _webhook_validator(name)
        if validator is None:
            return f"no schema for webhook {name!r} in spec/webhooks.json"
        errors = sorted(validator.iter_errors(payload), key=lambda e: list(e.absolute_path))
        if not errors:
            return None
        return "; ".join(f"{'/'.join(str(p) for p in e.absolute_path) or '<payload>'}: {e.message[:200]}"
                         for e in errors[:8])


@functools.lru_cache(maxsize=None)
def _component_validator(component: str):
    from openapi_schema_validator import OAS30Validator
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT4

    doc = _nullable_alternatives(json.loads(REST_SPEC.read_text()))
    registry = Registry().with_resource("urn:github-rest", Resource(doc, specification=DRAFT4))
    return OAS30Validator({"$ref": f"urn:github-rest#/components/schemas/{component}"}, registry=registry)


@functools.lru_cache(maxsize=None)
def _webhook_validator(name: str):
    from openapi_schema_validator import OAS30Validator
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT4

    doc = _nullable_alternatives(json.loads(WEBHOOK_SPEC.read_text()))
    hook = doc.get("x-webhooks", {}).get(name)
    if hook is None:
        return None
    schema = hook["post"]["requestBody"]["content"]["application/json"]["schema"]
    registry = Registry().with_resource("urn:github-webhooks", Resource(doc, specification=DRAFT4))
    wrapped = {"$ref": "urn:github-webhooks#" + schema["$ref"][1:]} if "$ref" in schema else schema
    return OAS30Validator(wrapped, registry=registry)


# --- filling required fields -------------------------------------------------------------------

def _resolve(schema: dict, doc: dict) -> dict:
    while isinstance(schema, dict) and "$ref" in schema:
        node: Any = doc
        for part in schema["$ref"][2:].split("/"):
            node = node[part]
        schema = node
    return schema


def _placeholder(schema: dict, doc: dict, depth: int) -> Any:
    schema = _resolve(schema, doc)
    if "allOf" in schema:
        merged: dict = {}
        for sub in schema["allOf"]:
            v = _placeholder(sub, doc, depth)
            if isinstance(v, dict):
                merged.update(v)
        return merged
    if "anyOf" in schema or "oneOf" in schema:
        alts = schema.get("anyOf") or schema.get("oneOf")
        if schema.get("nullable"):
            return None
        return _placeholder(alts[0], doc, depth)
    if schema.get("nullable"):
        return None
    if "enum" in schema:
        return schema["enum"][0]
    t = schema.get("type")
    if t == "object" or "properties" in schema:
        return _fill(schema, {}, doc, depth + 1)
    if t == "array":
        return []
    if t == "integer" or t == "number":
        return max(0, schema.get("minimum", 0))
    if t == "boolean":
        return False
    fmt = schema.get("format")
    if fmt == "date-time":
        return "1970-01-01T00:00:00Z"
    if fmt == "uri":
        return "https://github.invalid/"
    if fmt == "email":
        return "nobody@example.invalid"
    return ""


def _fill(schema: dict, obj: dict, doc: dict, depth: int) -> dict:
    schema = _resolve(schema, doc)
    if depth > 12:
        return obj
    if "allOf" in schema:
        for sub in schema["allOf"]:
            obj = _fill(sub, obj, doc, depth)
        return obj
    props = schema.get("properties", {})
    for name in schema.get("required", []):
        if name not in obj:
            obj[name] = _placeholder(props.get(name, {}), doc, depth)
    for name, value in list(obj.items()):
        sub = props.get(name)
        if sub is None:
            continue
        sub = _resolve(sub, doc)
        if isinstance(value, dict) and not sub.get("anyOf") and not sub.get("oneOf"):
            obj[name] = _fill(sub, value, doc, depth + 1)
        elif isinstance(value, list) and sub.get("type") == "array":
            items = _resolve(sub.get("items", {}), doc)
            if not items.get("anyOf") and not items.get("oneOf"):
                obj[name] = [_fill(items, v, doc, depth + 1) if isinstance(v, dict) else v for v in value]
    return obj


def fill(component: str, obj: dict) -> dict:
    """Complete ``obj`` in place with placeholders for the required fields of
    ``#/components/schemas/<component>`` it lacks (recursively into nested objects)."""
    doc = rest_document()
    return _fill(doc["components"]["schemas"][component], obj, doc, 0)


def fill_webhook(component: str, obj: dict) -> dict:
    """Like :func:`fill` for a schema of ``spec/webhooks.json``."""
    doc = webhook_document()
    return _fill(doc["components"]["schemas"][component], obj, doc, 0)
