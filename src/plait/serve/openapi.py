"""The served specs (`SpecInfo`) → an OpenAPI 3.1 document of `plait serve`'s API.

Each entry's `input` and `output` types (JSON Schema, as `plait.core.types.to_json_schema` writes them; text when
undeclared) become the request and result schemas of a run of that spec, and each ask's `answer` type and each
approval tool's parameters the schemas of the decisions that answer them. OpenAPI 3.1 takes JSON Schema as it is.
"""

from __future__ import annotations

from typing import Any

from plait.serve.service import ACTIONS, BUDGET_SCHEMA, STATUSES, SpecInfo

__all__ = ["document"]

TEXT: dict[str, Any] = {"type": "string"}
ERROR = {"type": "object", "properties": {"error": {"type": "string"}}, "required": ["error"]}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _error(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": _ref("Error")}}}


def document(specs: list[SpecInfo], answers: dict[str, dict[str, Any] | None], version: str) -> dict[str, Any]:
    """The OpenAPI document; `answers` maps `spec.ask` → the ask's answer schema (None entries are text)."""
    schemas: dict[str, Any] = {"Error": ERROR}
    starts = []
    outputs = []
    for spec in specs:
        for entry in spec.entries:
            key = f"{spec.name}.{entry.name}"
            schemas[f"{key}.input"] = entry.input_schema or TEXT
            schemas[f"{key}.output"] = entry.output_schema or TEXT
            outputs.append(_ref(f"{key}.output"))
            starts.append(
                {
                    "type": "object",
                    "title": f"start {key}",
                    "description": entry.description or f"a run of {entry.name} in {spec.name}",
                    "properties": {
                        "spec": {"const": spec.name},
                        "entry": {"const": entry.name},
                        "input": _ref(f"{key}.input"),
                    },
                    "required": ["spec", "input"],
                }
            )
    for name, schema in sorted(answers.items()):
        schemas[f"{name}.answer"] = schema or TEXT
    schemas["StartRun"] = {"oneOf": starts} if starts else {"type": "object"}
    schemas["Pending"] = {
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "kind": {"enum": ["approval", "ask", "unknown_outcome", "budget"]},
            "name": {"type": ["string", "null"]},
            "arguments": {"type": ["object", "null"]},
            "question": {"type": "string"},
            "answer_schema": {"type": ["object", "null"]},
            "path": {"type": "array", "items": {"type": "string"}, "description": "budget: its runnable's path"},
            "limit": {"type": "string", "description": "budget: the limit the next call would exceed"},
            "limits": {"type": "object", "description": "budget: its limits now"},
            "spent": {"type": "number", "description": "budget: what was spent of that limit"},
            "needed": {"type": "number", "description": "budget: what the refused call needed"},
        },
        "required": ["id", "kind", "name"],
    }
    schemas["RunView"] = {
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "spec": {"type": "string"},
            "entry": {"type": "string"},
            "status": {"enum": list(STATUSES)},
            "stop_reason": {"type": ["string", "null"]},
            "output": {"anyOf": [*outputs, {"type": "null"}]} if outputs else {},
            "error": {"type": ["string", "null"]},
            "pending": {"type": "array", "items": _ref("Pending")},
            "tokens": {
                "type": "object",
                "properties": {"input": {"type": "integer"}, "output": {"type": "integer"}},
            },
            "cost": {"type": ["number", "null"], "description": "USD of its priced model calls (null: none)"},
            "started": {"type": ["string", "null"], "format": "date-time"},
            "ended": {"type": ["string", "null"], "format": "date-time"},
            "spec_changes": {
                "type": "array",
                "items": {"type": "string"},
                "description": "a run left mid-way that was not taken up (stop_reason spec_changed): the changes to "
                "its spec since it started that can affect what is left to run",
            },
        },
        "required": ["id", "spec", "entry", "status", "pending", "tokens"],
    }
    answer_refs = [_ref(f"{name}.answer") for name in sorted(answers)]
    schemas["Decision"] = {
        "type": "object",
        "properties": {
            "id": {"type": "string", "description": "a pending item's id (an ask's name works too)"},
            "action": {"enum": list(ACTIONS)},
            "arguments": {"type": "object", "description": "edit: the arguments the call runs with instead"},
            "answer": {"anyOf": answer_refs} if answer_refs else {},
            "reason": {"type": "string", "description": "reject: what the model reads as the tool's result"},
            "budget": {**BUDGET_SCHEMA, "description": "raise_budget: the new limits of the budget the run stopped on"},
        },
        "required": ["id", "action"],
    }
    schemas["SpecInfo"] = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "path": {"type": "string"},
            "entries": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "description": {"type": "string"},
                        "input_schema": {"type": ["object", "null"]},
                        "output_schema": {"type": ["object", "null"]},
                    },
                },
            },
        },
    }
    run_id = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
    unauthorized = _error("no or wrong bearer token")
    view = {"description": "the run", "content": {"application/json": {"schema": _ref("RunView")}}}
    paths: dict[str, Any] = {
        "/specs": {
            "get": {
                "summary": "the served specs and their entries",
                "responses": {
                    "200": {
                        "description": "the specs",
                        "content": {"application/json": {"schema": {"type": "array", "items": _ref("SpecInfo")}}},
                    },
                    "401": unauthorized,
                },
            }
        },
        "/specs/{spec}/graph.svg": {
            "get": {
                "summary": "the spec's graph, as `plait render` draws it",
                "parameters": [{"name": "spec", "in": "path", "required": True, "schema": {"type": "string"}}],
                "responses": {
                    "200": {"description": "SVG", "content": {"image/svg+xml": {}}},
                    "404": _error("no such spec, or Graphviz is not installed"),
                },
            }
        },
        "/runs": {
            "post": {
                "summary": "start a run",
                "parameters": [
                    {
                        "name": "wait",
                        "in": "query",
                        "schema": {"type": "string"},
                        "description": "wait up to this long (`30s`, `500ms`) for the run to stop",
                    }
                ],
                "requestBody": {"required": True, "content": {"application/json": {"schema": _ref("StartRun")}}},
                "responses": {
                    "201": view | {"description": "the run, started"},
                    "200": view | {"description": "the run, stopped within `wait`"},
                    "400": _error("bad input: the message names the field"),
                    "401": unauthorized,
                    "413": _error("the body is over the cap"),
                },
            },
            "get": {
                "summary": "runs, newest first",
                "parameters": [
                    {"name": "spec", "in": "query", "schema": {"type": "string"}},
                    {"name": "status", "in": "query", "schema": {"enum": list(STATUSES)}},
                    {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1}},
                ],
                "responses": {
                    "200": {
                        "description": "the runs",
                        "content": {"application/json": {"schema": {"type": "array", "items": _ref("RunView")}}},
                    },
                    "401": unauthorized,
                },
            },
        },
        "/runs/{id}": {
            "get": {
                "summary": "a run: status, output, pending asks and approvals, tokens",
                "parameters": [
                    run_id,
                    {
                        "name": "wait",
                        "in": "query",
                        "schema": {"type": "string"},
                        "description": "hold the answer until the run stops (done, waiting, failed) or this long",
                    },
                ],
                "responses": {"200": view, "401": unauthorized, "404": _error("no such run")},
            }
        },
        "/runs/{id}/events": {
            "get": {
                "summary": "the run's events as Server-Sent Events, from its journal; resumable with Last-Event-ID",
                "parameters": [
                    run_id,
                    {"name": "after", "in": "query", "schema": {"type": "integer"}},
                    {"name": "Last-Event-ID", "in": "header", "schema": {"type": "integer"}},
                    {"name": "format", "in": "query", "schema": {"enum": ["ag-ui"]}},
                ],
                "responses": {
                    "200": {"description": "the event stream", "content": {"text/event-stream": {}}},
                    "401": unauthorized,
                    "404": _error("no such run"),
                },
            }
        },
        "/runs/{id}/trace": {
            "get": {
                "summary": "the run's timeline, as `plait trace ID --json` prints it",
                "parameters": [run_id],
                "responses": {"200": {"description": "the trace"}, "401": unauthorized, "404": _error("no such run")},
            }
        },
        "/runs/{id}/decisions": {
            "post": {
                "summary": "answer the run's pending asks, approvals and unknown outcomes; the run goes on",
                "parameters": [run_id],
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "properties": {
                                    "decisions": {"type": "array", "items": _ref("Decision")},
                                    "accept_changes": {
                                        "type": "boolean",
                                        "description": "go on even if the run's spec changed since it started in "
                                        "ways that can affect what is left to run (else 409)",
                                    },
                                },
                                "required": ["decisions"],
                            }
                        }
                    },
                },
                "responses": {
                    "202": view | {"description": "accepted: the run resumes"},
                    "400": _error("a decision that does not fit what is pending"),
                    "401": unauthorized,
                    "409": {
                        "description": "the run's spec changed since it started in ways that can affect what is "
                        "left to run: `changes` lists them; send accept_changes: true to go on",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "properties": {
                                        "error": {"type": "string"},
                                        "changes": {"type": "array", "items": {"type": "string"}},
                                    },
                                    "required": ["error", "changes"],
                                }
                            }
                        },
                    },
                    "404": _error("no such run"),
                },
            }
        },
        "/runs/{id}/cancel": {
            "post": {
                "summary": "cancel the run",
                "parameters": [run_id],
                "responses": {"202": view, "401": unauthorized, "404": _error("no such run")},
            }
        },
    }
    return {
        "openapi": "3.1.0",
        "info": {"title": "plait serve", "version": version},
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{"bearer": []}],
    }
