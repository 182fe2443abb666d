"""Declarations → normalised attribute values, with every unknown, missing,
duplicate or mistyped attribute reported.

Driven by `compiler.schema.SCHEMAS`; names inside attributes are
resolve_names' (it runs first and fills those values), chain and parallel
shapes are check_chains'. Typed blocks (`params`, `output`, `answer`) are
checked here too: which kinds have them, and that each is written once.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable

from plait.core.budget import BUDGET_KEYS, ON_EXCEEDED, UNPRICED, Budget
from plait.core.codes import declare, make
from plait.core.diagnostics import Fix, Label, Severity, did_you_mean
from plait.core.source import Span
from plait.dsl import ast

from ..context import CompileContext
from ..params import params_schema
from ..schema import PROVIDERS, SCHEMAS, TYPED_BLOCKS, Attr, a, suggest
from .check_tool_runs import tool_run
from ._blocks import REF_TYPES, body_of, describe_value, path_parts, wrong_type

# The codes this module raises; their documentation is explain/<code>.md beside it.
P201 = declare("P201", "unknown-attribute", Severity.ERROR, "an attribute the declaration does not have")
P202 = declare("P202", "missing-attribute", Severity.ERROR, "a required attribute is missing")
P203 = declare("P203", "wrong-type", Severity.ERROR, "an attribute value of the wrong type")
P204 = declare("P204", "invalid-value", Severity.ERROR, "a value of the right type that is not allowed")
P205 = declare("P205", "duplicate-attribute", Severity.ERROR, "an attribute written twice in one block")
P230 = declare("P230", "invalid-messages", Severity.ERROR, "a step's `messages` the model cannot be sent as written")

#: What a step's `messages` list may hold: `system("...")`, `user("...")`, `assistant("...")`.
ROLES = ("system", "user", "assistant")

__all__ = ["check_types", "folder"]

#: An http tool's URL template starts with its scheme and a host (which a template may fill: `https://{{host}}/`).
_HTTP_URL = re.compile(r"(?i)https?://[^/?#\s]")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]{0,30}:")


def _show(number: float) -> str:
    # `:g` converts to float, which overflows for integers past ~1e308.
    try:
        return f"{number:g}"
    except OverflowError:
        return f"a {len(str(abs(number)))}-digit number"


def folder(ctx: CompileContext, decl: ast.Node) -> Path | None:
    """Where relative paths written in `decl` resolve: its file's directory, or
    for spec text the root directory (None when there is none)."""
    file = decl.span.file
    return Path(file).resolve().parent if file != "<string>" else ctx.load.root_dir


class _Checker:
    def __init__(self, ctx: CompileContext) -> None:
        self.ctx = ctx
        self.report = ctx.diagnostics.append

    # --- generic values -----------------------------------------------------------

    def wrong_type(self, attr: str, spec: Attr, value: ast.Node) -> None:
        wrong_type(self.report, attr, spec, value)

    def twice(self, message: str, span: Span, first: Span, where: str = "first set here") -> None:
        """P205: a key or typed block written again in one block, pointing at where it was first written."""
        self.report(make("P205", message, span, labels=[Label(first, where)]))

    def check_range(self, attr: str, spec: Attr, number: float, span: Span) -> bool:
        if spec.minimum is not None and number < spec.minimum:
            self.report(make("P204", f"`{attr}` must be at least {spec.minimum:g}, found {_show(number)}", span))
            return False
        if spec.maximum is not None and number > spec.maximum:
            self.report(make("P204", f"`{attr}` must be at most {spec.maximum:g}, found {_show(number)}", span))
            return False
        return True

    def symbol(self, attr: str, spec: Attr, value: ast.Node) -> str | None:
        word = value.name if isinstance(value, ast.Ref) else value.value if isinstance(value, ast.String) else None
        if word is None:
            self.wrong_type(attr, spec, value)
            return None
        if word not in spec.choices:
            hint = suggest(word, spec.choices)
            self.report(
                make(
                    "P204",
                    f"`{word}` is not a valid `{attr}`; expected one of " + ", ".join(f"`{c}`" for c in spec.choices),
                    value.span,
                    fix=did_you_mean(hint, value.span),
                )
            )
            return None
        return word

    def value(self, owner: str, attr: str, spec: Attr, value: ast.Node) -> Any:
        t = spec.type
        if t in ("string", "template"):
            if not isinstance(value, ast.String):
                return self.wrong_type(attr, spec, value)
            if spec.choices and value.value not in spec.choices:
                return self.symbol(attr, spec, value)
            return value.value
        if t in ("number", "int"):
            if not isinstance(value, ast.Number) or (t == "int" and not isinstance(value.value, int)):
                return self.wrong_type(attr, spec, value)
            return value.value if self.check_range(attr, spec, value.value, value.span) else None
        if t == "duration":
            if not isinstance(value, ast.Duration):
                return self.wrong_type(attr, spec, value)
            return value.seconds if self.check_range(attr, spec, value.seconds, value.span) else None
        if t == "bool":
            return value.value if isinstance(value, ast.Bool) else self.wrong_type(attr, spec, value)
        if t == "size":
            size = getattr(value, "bytes", None) if getattr(value, "kind", None) == "size" else None
            if size is None and isinstance(value, ast.Number) and isinstance(value.value, int):
                size = value.value  # a whole number of bytes, before size literals reach every grammar
            if size is None:
                return self.wrong_type(attr, spec, value)
            return size if self.check_range(attr, spec, size, value.span) else None
        if t == "map":
            return self.map(attr, spec, value)
        if t == "symbol":
            return self.symbol(attr, spec, value)
        if t == "symbols":
            if not isinstance(value, ast.ListValue):
                return self.wrong_type(attr, spec, value)
            return tuple(w for w in (self.symbol(attr, spec, item) for item in value.items) if w)
        if t == "env":
            return self.env(attr, spec, value)
        if t == "env_map":
            return self.env_map(attr, spec, value)
        if t == "strings":
            if not isinstance(value, ast.ListValue) or not value.items:
                return self.wrong_type(attr, spec, value)
            # One node at a time: a long list's items are rebuilt on access (ast.PackedItems), never all held.
            strings = []
            for item in value.items:
                if not isinstance(item, ast.String):
                    return self.wrong_type(attr, spec, value)
                strings.append(item.value)
            if not strings[0]:
                return self.wrong_type(attr, spec, value)
            return tuple(strings)
        if t == "mcp_approval" and isinstance(value, ast.Block):  # from 0.3: `{ write_file = required | CONDITION }`
            return self.mcp_approval(attr, spec, value)
        if t in ("names", "mcp_approval"):
            if not isinstance(value, ast.ListValue):
                return self.wrong_type(attr, spec, value)
            names = []
            for item in value.items:
                # A quoted name is a tool whose name is no plait word (`"get-tiny-image"`).
                word = item.name if isinstance(item, ast.Ref) else item.value if isinstance(item, ast.String) else None
                if not word:
                    self.wrong_type(attr, spec, item)
                else:
                    names.append(word)
            return tuple(names)
        if t == "tool_choice":
            return self.tool_choice(owner, attr, spec, value)
        if t == "keep_last":
            return self.keep_last(attr, spec, value)
        if t in ("run", "validator"):
            return self.run(owner, attr, spec, value)
        if t == "messages":
            return self.messages(attr, value)
        if t == "path":
            return self.path(attr, spec, value)
        if t == "condition":
            return value  # typed against the loop body's output by check_flow
        if t == "approval":  # `required`, `never`, or a condition over the call's arguments (typed by check_flow)
            return self.symbol(attr, spec, value) if isinstance(value, ast.Ref) else self.approval(attr, spec, value)
        if t == "bindings":
            return self.bindings(attr, spec, value)
        if t == "budget":
            return self.budget(attr, spec, value)
        raise AssertionError(f"unknown attribute type {t}")

    def messages(self, attr: str, value: ast.Node) -> tuple[dict[str, str], ...] | None:
        """`[system("..."), user("..."), assistant("..."), user("...")]` → ({"role", "content"}, ...) (P230).

        System messages come first (every provider takes the system prompt apart from the turns) and the last
        is a user message (the model answers it); each content is a template, checked as a prompt is."""
        items = value.items if isinstance(value, ast.ListValue) else None
        if not items:
            self.report(
                make(
                    "P230",
                    f"`{attr}` is a non-empty list of messages, found {describe_value(value)}",
                    value.span,
                    fix=Fix(f'write `{attr} = [system("..."), user("...")]`'),
                )
            )
            return None
        out: list[dict[str, str]] = []
        for item in items:
            call = item if isinstance(item, ast.Call) else None
            role = call.func.name if call is not None else None
            text = call.args[0] if call is not None and len(call.args) == 1 else None
            if call is None or role not in ROLES or not isinstance(text, ast.String) or call.block is not None:
                hint = suggest(role, ROLES) if role else None
                self.report(
                    make(
                        "P230",
                        'a message is `system("...")`, `user("...")` or `assistant("...")`, found '
                        + (f"`{role}(...)`" if role else describe_value(item)),
                        item.span,
                        fix=did_you_mean(hint, call.func.span) if call is not None else None,
                    )
                )
                return None
            if role == "system" and out and out[-1]["role"] != "system":
                self.report(
                    make(
                        "P230",
                        "a system message after the conversation has started",
                        item.span,
                        notes=["providers take the system prompt apart from the turns: it comes first"],
                        fix=Fix("move it to the start of the list"),
                    )
                )
                return None
            out.append({"role": role, "content": text.value})
        if out[-1]["role"] != "user":
            self.report(
                make(
                    "P230",
                    f"the last message is `{out[-1]['role']}`, so there is nothing for the model to answer",
                    items[-1].span,
                    notes=["the model replies to the last user message"],
                    fix=Fix('end the list with `user("...")`'),
                )
            )
            return None
        return tuple(out)

    def approval(self, attr: str, spec: Attr, value: ast.Node) -> Any:
        """A tool's conditional `approval` → its condition record (None, reported, for a shape no condition has)."""
        from .build_graph import condition_of

        if isinstance(value, ast.Compare | ast.BoolOp | ast.Not | ast.String | ast.PathValue):
            found = condition_of(value)
            if found is not None:
                return found
        self.wrong_type(attr, spec, value)
        return None

    def mcp_approval(self, attr: str, spec: Attr, value: ast.Block) -> dict[str, Any]:
        """An MCP server's `approval = { TOOL = required | CONDITION }` → tool → True or its condition record (the
        condition is typed against the tool's locked input schema by check_flow)."""
        gated: dict[str, Any] = {}
        for entry in value.attributes:
            rule = entry.value
            if isinstance(rule, ast.Ref) and rule.name == "required":
                gated[entry.key.name] = True
                continue
            found = self.approval(attr, spec, rule)
            if found is not None:
                gated[entry.key.name] = found
        return gated

    def path(self, attr: str, spec: Attr, value: ast.Node) -> tuple[str, ...] | None:
        parts = path_parts(value)
        if parts is None:
            self.wrong_type(attr, spec, value)
        return parts

    def bindings(self, attr: str, spec: Attr, value: ast.Node) -> dict[str, Any] | None:
        """`with { name: path ... }` → {name: the path's parts}; what each path reads is check_flow's (P401/P402/P316)."""
        if not isinstance(value, ast.Block) or value.params:
            self.wrong_type(attr, spec, value)
            return None
        from ..expressions import sole_read

        out: dict[str, Any] = {}  # a path's parts, or an expression's `Expr`
        first: dict[str, ast.Attribute] = {}
        for entry in value.attributes:
            key = entry.key.name
            if key in first:
                self.twice(f"`with` binds `{key}` twice", entry.key.span, first[key].key.span, "first bound here")
                continue
            first[key] = entry
            v = entry.value
            if (parts := path_parts(v)) is not None:
                out[key] = parts
            elif isinstance(v, ast.String) and (bound := sole_read(v.value)) is not None:
                out[key] = bound  # `n: "{{ len(plan.tasks) }}"`
            else:
                self.report(
                    make(
                        "P203",
                        f"`with` binds `{key}` to a path like `planner.tasks` or `input.topic`,"
                        f" found {describe_value(v)}",
                        v.span,
                        notes=['or to one expression, written as a string: `"{{ len(planner.tasks) }}"`'],
                    )
                )
        return out

    def map(self, attr: str, spec: Attr, value: ast.Node, each: Callable[[ast.Node], Any] | None = None) -> dict | None:
        """A map's `KEY = value` entries → {KEY: each(value)}; values `each` rejects (None, reported) are left out."""
        if not isinstance(value, ast.Block) or value.params:
            self.wrong_type(attr, spec, value)
            return None
        out: dict[str, Any] = {}
        check = each or self.plain(attr)
        for key, entry in value.entries():
            v = check(entry)
            if v is not None:
                out[key] = v
        return out

    def budget(self, attr: str, spec: Attr, value: ast.Node) -> Budget | None:
        """`{ usd = 2.00, tokens = 50000, model_calls = 20, on_exceeded = fail, unpriced = allow }` → a Budget."""
        if not isinstance(value, ast.Block) or value.params:
            self.wrong_type(attr, spec, value)
            return None
        items: dict[str, Any] = {}
        reported = len(self.ctx.diagnostics)
        for entry in value.attributes:
            key = entry.key.name
            if key not in BUDGET_KEYS:
                hint = suggest(key, list(BUDGET_KEYS))
                self.report(
                    make(
                        "P201",
                        f"unknown budget key `{key}`",
                        entry.key.span,
                        notes=["budget keys: " + ", ".join(f"`{k}`" for k in BUDGET_KEYS)],
                        fix=did_you_mean(hint, entry.key.span),
                    )
                )
                continue
            v = entry.value
            if key in ("on_exceeded", "unpriced"):
                choices = ON_EXCEEDED if key == "on_exceeded" else UNPRICED
                word = self.symbol(f"{attr}.{key}", Attr("symbol", choices=choices), v)
                if word is not None:
                    items[key] = word
                continue
            whole = key != "usd"
            if not isinstance(v, ast.Number) or (whole and not isinstance(v.value, int)):
                kind = "a whole number" if whole else "a number of US dollars"
                self.report(make("P203", f"budget `{key}` takes {kind}", v.span))
                continue
            if v.value < 0:
                self.report(make("P204", f"budget `{key}` must be at least 0, found {_show(v.value)}", v.span))
                continue
            items[key] = v.value
        if len(self.ctx.diagnostics) != reported:
            return None  # one report per mistake: a budget with a wrong key is not also "limits nothing"
        budget = Budget().with_items(items)
        if not budget.limited:
            self.report(
                make(
                    "P202",
                    "a budget limits nothing without `usd`, `tokens` or `model_calls`",
                    value.span,
                    fix=Fix("add `usd = 2.00` (or `tokens`, `model_calls`)"),
                )
            )
            return None
        return budget

    def plain(self, attr: str) -> Callable[[ast.Node], Any]:
        def value(v: ast.Node) -> Any:
            if isinstance(v, ast.String | ast.Number | ast.Bool):
                return v.value
            self.report(make("P203", f"`{attr}` values must be strings, numbers or booleans", v.span))
            return None

        return value

    def _call(self, attr: str, spec: Attr, value: ast.Node, funcs: tuple[str, ...]) -> ast.Call | None:
        if not isinstance(value, ast.Call) or value.func.name not in funcs:
            self.wrong_type(attr, spec, value)
            return None
        return value

    def env(self, attr: str, spec: Attr, value: ast.Node) -> str | None:
        if isinstance(value, ast.String):
            return None  # a key written literally: the literal-secret rule reports it (P501)
        call = self._call(attr, spec, value, ("env",))
        if call is None:
            return None
        if len(call.args) != 1 or not isinstance(call.args[0], ast.String) or not call.args[0].value:
            self.report(make("P203", '`env` takes one variable name: `env("OPENAI_API_KEY")`', call.span))
            return None
        return call.args[0].value

    def env_map(self, attr: str, spec: Attr, value: ast.Node) -> dict | None:
        """`{ KEY = env("NAME"), MODE = "debug" }` → {"KEY": {"env": "NAME"}, "MODE": "debug"}."""

        def each(v: ast.Node) -> Any:
            if isinstance(v, ast.String):
                return v.value  # a secret written here is the literal-secret rule's (P501)
            name = self.env(attr, Attr("env"), v)
            return {"env": name} if name is not None else None

        return self.map(attr, spec, value, each)

    def tool_choice(self, owner: str, attr: str, spec: Attr, value: ast.Node) -> str | None:
        """`auto`, `none`, `required`, or on an agent one of its own tools (resolve_names has filled `tools`)."""
        word = value.name if isinstance(value, ast.Ref) else value.value if isinstance(value, ast.String) else None
        if word is None:
            self.wrong_type(attr, spec, value)
            return None
        if self.ctx.decls[owner].kind != "agent":  # a model's default: it cannot know which tools its agents have
            return self.symbol(attr, spec, value)
        tools = self.ctx.values[owner].get("tools") or ()
        if not tools:
            self.report(
                make(
                    "P201",
                    f"agent `{owner}` has no `tools`, so `{attr}` does nothing",
                    value.span,
                    fix=Fix(f"remove `{attr}`, or give the agent `tools`"),
                )
            )
            return None
        # An MCP server's tools are known from its lock only; a name beside a listed server is taken on trust.
        servers = any(self.ctx.decls[t].kind == "mcp" for t in tools if t in self.ctx.decls)
        if word in spec.choices or word in tools or servers:
            return word
        listed = ", ".join(f"`{c}`" for c in (*spec.choices, *tools))
        fix: Fix | None
        if word in self.ctx.decls:  # declared, just not given to this agent
            message, fix = f"agent `{owner}` has no `{word}` among its `tools`", Fix(f"add `{word}` to `tools`")
        else:
            hint = suggest(word, [*spec.choices, *tools])
            message = f"`{attr} = {word}` names no tool of agent `{owner}`"
            fix = did_you_mean(hint, value.span)
        self.report(make("P204", f"{message}; expected one of {listed}", value.span, fix=fix))
        return None

    def keep_last(self, attr: str, spec: Attr, value: ast.Node) -> int | None:
        call = self._call(attr, spec, value, ("keep_last",))
        if call is None:
            return None
        arg = call.args[0] if len(call.args) == 1 else None
        if not isinstance(arg, ast.Number) or not isinstance(arg.value, int) or arg.value < 1:
            self.report(make("P203", "`keep_last` takes one whole number of messages, at least 1", call.span))
            return None
        return arg.value

    def run(self, owner: str, attr: str, spec: Attr, value: ast.Node) -> dict | None:
        # A code step's `run` and a validator are python only.
        code_step = self.ctx.decls[owner].kind == "step" or spec.type == "validator"
        call = self._call(attr, spec, value, ("python",) if code_step else ("python", "http", "delegate", "hosted"))
        if call is None:
            return None
        if call.func.name in ("delegate", "hosted"):  # an agent tool or a provider's own (plait 0.3)
            return tool_run(self.ctx, owner, call, self.report)
        if call.func.name == "python":
            arg = call.args[0] if len(call.args) == 1 else None
            if not isinstance(arg, ast.String) or ":" not in arg.value or call.block is not None:
                self.report(make("P203", '`python` takes one "module:function" string', call.span))
                return None
            module, _, function = arg.value.partition(":")
            if not all(part.isidentifier() for part in module.split(".")) or not function.isidentifier():
                self.report(make("P204", f'`{arg.value}` is not a valid "module:function" target', arg.span))
                return None
            where = folder(self.ctx, self.ctx.decls[owner])
            return {"type": "python", "target": arg.value, "base_dir": str(where) if where else None}
        if len(call.args) != 2 or not isinstance(call.args[0], ast.Ref) or not isinstance(call.args[1], ast.String):
            self.report(make("P203", '`http` takes a method and a URL: `http(GET, "https://...")`', call.span))
            return None
        method = call.args[0].name.upper()
        if method not in ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"):
            self.report(make("P204", f"`{call.args[0].name}` is not an HTTP method", call.args[0].span))
            return None
        url = call.args[1]
        if not _HTTP_URL.match(url.value):
            # Only the scheme is named: the rest of the URL may carry a token.
            scheme = _SCHEME.match(url.value)
            named = scheme is not None and scheme.group(0).lower() not in ("http:", "https:")
            shown = f", not `{scheme.group(0)}`" if named and scheme else ""
            self.report(
                make(
                    "P204",
                    f"an http tool's URL must start with `http://` or `https://` and a host{shown}",
                    url.span,
                    notes=["template values cannot supply the scheme or `//`: they are encoded as path segments"],
                )
            )
            return None
        headers: dict[str, Any] = {}
        body = None
        if call.block is not None:
            for entry in call.block.attributes:
                if entry.key.name == "headers":
                    headers = self.map("headers", Attr("map"), entry.value) or {}
                elif entry.key.name == "body" and isinstance(entry.value, ast.String):
                    body = entry.value.value
                else:
                    hint = suggest(entry.key.name, ["headers", "body"])
                    self.report(
                        make(
                            "P201",
                            f"unknown attribute `{entry.key.name}` in `http`; expected `headers` or `body`",
                            entry.key.span,
                            fix=did_you_mean(hint, entry.key.span),
                        )
                    )
        return {"type": "http", "method": method, "url": call.args[1].value, "headers": headers, "body": body}

    # --- declarations -------------------------------------------------------------

    def block(self, name: str, kind: str, body: ast.Block | None) -> None:
        schema = SCHEMAS[kind]
        values = self.ctx.draft(name)
        spans = self.ctx.spans.setdefault(name, {})
        seen: dict[str, ast.Attribute] = {}
        for entry in body.attributes if body else ():
            key = entry.key.name
            if key in seen:
                self.twice(f"`{key}` is set twice", entry.key.span, seen[key].key.span)
                continue
            seen[key] = entry
            spec = schema.get(key)
            if spec is None or entry.quoted:
                # Typed blocks (`output { ... }`) are attributes to the reader too: list them, and hint at them.
                blocks = TYPED_BLOCKS.get(kind, ())
                hint = suggest(key, [*schema, *blocks])
                listed = ", ".join([*(f"`{k}`" for k in schema), *(f"`{b} {{ ... }}`" for b in blocks)]) or "none"
                fix: Fix | None
                if key in blocks:
                    fix = Fix(f"`{key}` is a block: write `{key} {{ field: type }}`")
                elif hint in blocks:
                    fix = did_you_mean(hint, shown=f"`{hint} {{ ... }}`")
                else:
                    fix = did_you_mean(hint, entry.key.span)
                self.report(
                    make(
                        "P201",
                        f"unknown attribute `{key}` for {kind} `{name}`",
                        entry.key.span,
                        notes=[f"{kind} attributes: {listed}"],
                        fix=fix,
                    )
                )
                continue
            spans[key] = entry.value.span
            if spec.type not in REF_TYPES:  # resolve_names has set those
                values[key] = self.value(name, key, spec, entry.value)
        code_step = kind == "step" and "run" in seen
        # `with` alone makes a step a record builder: its output is the bound record, no model is called.
        builder = kind == "step" and "with" in seen and not ({"model", "prompt", "run"} & seen.keys())
        for key, spec in schema.items():
            if key not in seen:
                # `messages` stands for `prompt` (plait 0.3).
                spoken = key == "prompt" and "messages" in seen
                if spec.required and not spoken and not ((code_step or builder) and key in ("model", "prompt")):
                    decl = self.ctx.decls[name]
                    self.report(
                        make(
                            "P202",
                            f"{kind} `{name}` has no `{key}`",
                            decl.name.span,
                            fix=Fix(f"add `{key} = ...` to the block"),
                        )
                    )
                values[key] = spec.default
            elif values.get(key) is None:
                values[key] = spec.default
        if code_step:
            for key in ("model", "prompt", "validate", "messages"):
                if key in seen:
                    self.report(
                        make(
                            "P201",
                            f"step `{name}` runs python code, so `{key}` does nothing",
                            seen[key].key.span,
                            labels=[Label(seen["run"].key.span, "the step's code")],
                            fix=Fix(f"remove `{key}`, or remove `run` to make it a model step"),
                        )
                    )
        if kind == "step" and "messages" in seen and not code_step and not builder:
            for key in ("prompt", "system"):  # one way to say what is sent
                if key in seen:
                    self.report(
                        make(
                            "P230",
                            f"step `{name}` has both `messages` and `{key}`",
                            seen[key].key.span,
                            labels=[Label(seen["messages"].key.span, "what it sends")],
                            fix=Fix(
                                f'remove `{key}`; write it as `{"user" if key == "prompt" else key}("...")` in `messages`'
                            ),
                        )
                    )
        if builder and body is not None:
            self.builder_extras(name, seen, body)
        if body is not None:
            self.typed_blocks(name, kind, body)

    def builder_extras(self, name: str, seen: dict[str, ast.Attribute], body: ast.Block) -> None:
        """P201 for what a record builder (a step with `with` and no `model` or `run`) would ignore."""
        keys = ("system", "max_tokens", "temperature", "retry_malformed", "validate", "messages")
        found: list[tuple[str, Span]] = [(k, seen[k].key.span) for k in keys if k in seen]
        typed = body.typed("output")
        if typed is not None:
            found.append(("output", typed.span))
        for key, span in found:
            self.report(
                make(
                    "P201",
                    f"step `{name}` builds its output from `with` (it has no `model` or `run`), so `{key}` does nothing",
                    span,
                    labels=[Label(seen["with"].key.span, "the record it builds")],
                    fix=Fix(f"remove `{key}`, or give the step a `model` and a `prompt`"),
                )
            )

    def typed_blocks(self, name: str, kind: str, body: ast.Block) -> None:
        allowed = TYPED_BLOCKS.get(kind, ())
        first: dict[str, ast.Params] = {}
        for typed in body.params:
            keyword = getattr(typed, "keyword", "params")
            if keyword not in allowed:
                has = " or ".join(f"`{k}`" for k in allowed)
                notes = [f"{a(kind)} has {has}"] if has else []
                self.report(make("P201", f"{a(kind)} has no `{keyword}`", typed.span, notes=notes))
            elif keyword in first:
                self.twice(f"`{keyword}` is set twice", typed.span, first[keyword].span)
            else:
                first[keyword] = typed

    def model(self, decl: ast.ModelDecl) -> None:
        name = decl.name.name
        self.block(name, "model", decl.body)
        values = self.ctx.values[name]
        target = decl.target.value
        provider, sep, model_id = target.partition("/")
        if not sep or not model_id or provider not in PROVIDERS:
            hint = suggest(provider, PROVIDERS)
            self.report(
                make(
                    "P204",
                    f'`{target}` is not "provider/model-id" with a known provider',
                    decl.target.span,
                    notes=["providers: " + ", ".join(f"`{p}`" for p in PROVIDERS)],
                    fix=did_you_mean(hint) if sep else None,
                )
            )
        values["provider"], values["model_id"] = provider, model_id
        values["api_key_env"] = values.pop("api_key", None)
        if values.get("script") is not None and provider == "scripted":
            where = folder(self.ctx, decl)
            values["script"] = str(where / values["script"]) if where else values["script"]

    def tool(self, decl: ast.ToolDecl) -> None:
        name = decl.name.name
        self.block(name, "tool", decl.body)
        values = self.ctx.values[name]
        values["description"] = decl.description.value if decl.description else ""
        approval = values["approval"]
        values["approval"] = approval == "required" if approval is None or isinstance(approval, str) else approval
        run = values.get("run")
        if isinstance(run, dict) and run.get("type") == "http":
            # The http settings travel with the request they govern (src/plait/runtime/tools.py reads them from `run`).
            values["run"] = {
                **run,
                "allow_private": values.pop("allow_private", False),
                "max_response": values.pop("max_response", None) or SCHEMAS["tool"]["max_response"].default,
            }
        params = [p for p in decl.body.params if getattr(p, "keyword", "params") == "params"]
        values["parameters"] = params_schema(params[0] if params else None, self.report, self.ctx.named_types)

    def simple(
        self,
        decl: ast.AgentDecl
        | ast.StepDecl
        | ast.ConsolidateDecl
        | ast.ParallelDecl
        | ast.LoopDecl
        | ast.MapDecl
        | ast.AskDecl
        | ast.McpDecl,
    ) -> None:
        name = decl.name.name
        self.block(name, decl.kind, body_of(decl))
        description = getattr(decl, "description", None)
        draft = self.ctx.draft(name)
        gated = draft.get("approval") if isinstance(decl, ast.McpDecl) else None
        # `{ TOOL = required | CONDITION }`: every tool it names is gated, some on a condition.
        if isinstance(gated, dict):
            draft["approval"] = tuple(gated)
            draft["approval_when"] = {tool: when for tool, when in gated.items() if when is not True}
        if draft.declares("description"):  # a step's, a parallel's or an ask's is not drawn
            draft["description"] = description.value if description else None


def check_types(ctx: CompileContext) -> None:
    checker = _Checker(ctx)
    for decl in ctx.decls.values():
        if isinstance(decl, ast.ModelDecl):
            checker.model(decl)
        elif isinstance(decl, ast.ToolDecl):
            checker.tool(decl)
        elif isinstance(decl, ast.ChainDecl | ast.RouteDecl):
            checker.block(decl.name.name, decl.kind, decl.body)  # a `budget` is all either may write
        elif isinstance(decl, ast.AskDecl):
            checker.simple(decl)
            ctx.values[decl.name.name]["question"] = decl.question.value
        else:
            checker.simple(decl)
