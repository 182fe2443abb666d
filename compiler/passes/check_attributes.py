"""Declarations → normalised attribute values, with every unknown, missing,
mistyped or unresolvable attribute reported.

Driven by `compiler.schema.SCHEMAS`. References are resolved here too, since
a reference's expected kind is part of the attribute's type.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from plait.dsl import ast
from plait.core.diagnostics import Fix, Label
from plait.core.source import Span

from plait.core.codes import make
from ..context import CompileContext, Reference
from ..params import params_schema
from ..schema import PROVIDERS, RUNNABLE_KINDS, SCHEMAS, Attr, a, suggest

#: What a chain element or parallel branch may name, in the order messages list them.
_RUNNABLE = tuple(sorted(RUNNABLE_KINDS))

_TYPE_WORDS = {
    "string": "a string",
    "template": "a string",
    "number": "a number",
    "int": "a whole number",
    "duration": "a duration like `30s`",
    "bool": "`true` or `false`",
    "map": "a map `{ \"key\" = value }`",
    "ref": "a name",
    "refs": "a list of names `[a, b]`",
    "symbol": "one of",
    "symbols": "a list of",
    "run": '`python("module:function")` or `http(METHOD, "url")`',
    "env": '`env("VARIABLE")`',
    "keep_last": "`keep_last(N)`",
    "until": "a tool name, a list of tool names, or `TOOL succeeded`",
}


def _describe(value: ast.Node) -> str:
    return {
        "string": "a string",
        "number": "a number",
        "duration": "a duration",
        "bool": "a boolean",
        "ref": "a name",
        "succeeded": "`… succeeded`",
        "list": "a list",
        "call": "a call",
        "block": "a map",
    }.get(getattr(value, "kind", ""), "a value")


def _show(number: float) -> str:
    # `:g` converts to float, which overflows for integers past ~1e308.
    try:
        return f"{number:g}"
    except OverflowError:
        return f"a {len(str(abs(number)))}-digit number"


class _Checker:
    def __init__(self, ctx: CompileContext) -> None:
        self.ctx = ctx
        self.report = ctx.diagnostics.append

    # --- generic values -----------------------------------------------------------

    def wrong_type(self, attr: str, spec: Attr, value: ast.Node) -> None:
        expected = _TYPE_WORDS[spec.type]
        if spec.type in ("symbol", "symbols"):
            expected += " " + ", ".join(f"`{c}`" for c in spec.choices)
        self.report(make("P203", f"`{attr}` must be {expected}, found {_describe(value)}", value.span))

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
                    f"`{word}` is not a valid `{attr}`; expected one of "
                    + ", ".join(f"`{c}`" for c in spec.choices),
                    value.span,
                    fix=Fix(f"did you mean `{hint}`?", value.span, hint) if hint else None,
                )
            )
            return None
        return word

    def resolve(
        self, owner: str, attr: str, ref: ast.Ref | ast.ChainRef | ast.Ident, kinds: tuple[str, ...], index: int = 0
    ) -> str | None:
        """The declaration `ref` names, if it is one of `kinds`, recorded as a reference; else None, reported."""
        name = ref.name
        decl = self.ctx.decls.get(name)
        if decl is None:
            candidates = [n for n, d in self.ctx.decls.items() if d.kind in kinds] or list(self.ctx.decls)
            hint = suggest(name, candidates)
            what = " or ".join(kinds)
            self.report(
                make(
                    "P101",
                    f"undefined name `{name}`",
                    ref.span,
                    notes=[f"`{attr}` takes {a(what)}"],
                    fix=Fix(f"did you mean `{hint}`?", ref.span, hint) if hint else None,
                )
            )
            return None
        if decl.kind not in kinds:
            self.report(
                make(
                    "P103",
                    f"`{name}` is {a(decl.kind)}, but `{attr}` takes {a(' or '.join(kinds))}",
                    ref.span,
                    labels=[Label(decl.name.span, f"`{name}` is declared here")],
                )
            )
            return None
        self.ctx.references.append(Reference(owner, attr, name, ref.span, index))
        return name

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
        if t == "map":
            return self.map(attr, spec, value)
        if t == "symbol":
            return self.symbol(attr, spec, value)
        if t == "symbols":
            if not isinstance(value, ast.ListValue):
                return self.wrong_type(attr, spec, value)
            return tuple(w for w in (self.symbol(attr, spec, item) for item in value.items) if w)
        if t == "ref":
            if not isinstance(value, ast.Ref):
                return self.wrong_type(attr, spec, value)
            return self.resolve(owner, attr, value, spec.kinds)
        if t == "refs":
            if not isinstance(value, ast.ListValue):
                return self.wrong_type(attr, spec, value)
            return self.refs(owner, attr, spec, value, spec.kinds)
        if t == "until":
            return self.until(owner, attr, value)
        if t == "env":
            return self.env(attr, spec, value)
        if t == "keep_last":
            return self.keep_last(attr, spec, value)
        if t == "run":
            return self.run(owner, attr, spec, value)
        raise AssertionError(f"unknown attribute type {t}")

    def map(self, attr: str, spec: Attr, value: ast.Node) -> dict | None:
        if not isinstance(value, ast.Block) or value.params:
            return self.wrong_type(attr, spec, value)
        out: dict[str, Any] = {}
        for entry in value.attributes:
            v = entry.value
            if isinstance(v, ast.String | ast.Number | ast.Bool):
                out[entry.key.name] = v.value
            else:
                self.report(make("P203", f"`{attr}` values must be strings, numbers or booleans", v.span))
        return out

    def until(self, owner: str, attr: str, value: ast.Node) -> tuple | None:
        spec = SCHEMAS["agent"]["until"]
        if isinstance(value, ast.Succeeded):
            name = self.resolve(owner, attr, value.target, ("tool", "agent"))
            self.ctx.values[owner]["until_succeeded"] = True
            return (name,) if name else ()
        if isinstance(value, ast.Ref):
            name = self.resolve(owner, attr, value, ("tool", "agent"))
            return (name,) if name else ()
        if isinstance(value, ast.ListValue):
            return self.refs(owner, attr, spec, value, ("tool", "agent"))
        return self.wrong_type(attr, spec, value)

    def refs(self, owner: str, attr: str, spec: Attr, value: ast.ListValue, kinds: tuple[str, ...]) -> tuple[str, ...]:
        """The names of a list that resolve to one of `kinds`; every other item is reported."""
        out = []
        for i, item in enumerate(value.items):
            if not isinstance(item, ast.Ref):
                self.wrong_type(attr, spec, item)
                continue
            name = self.resolve(owner, attr, item, kinds, i)
            if name is not None:
                out.append(name)
        return tuple(out)

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
        call = self._call(attr, spec, value, ("python", "http"))
        if call is None:
            return None
        if call.func.name == "python":
            arg = call.args[0] if len(call.args) == 1 else None
            if not isinstance(arg, ast.String) or ":" not in arg.value or call.block is not None:
                self.report(make("P203", '`python` takes one "module:function" string', call.span))
                return None
            module, _, function = arg.value.partition(":")
            if not all(part.isidentifier() for part in module.split(".")) or not function.isidentifier():
                self.report(make("P204", f'`{arg.value}` is not a valid "module:function" target', arg.span))
                return None
            folder = self.folder(self.ctx.decls[owner])
            return {"type": "python", "target": arg.value, "base_dir": str(folder) if folder else None}
        if len(call.args) != 2 or not isinstance(call.args[0], ast.Ref) or not isinstance(call.args[1], ast.String):
            self.report(make("P203", '`http` takes a method and a URL: `http(GET, "https://...")`', call.span))
            return None
        method = call.args[0].name.upper()
        if method not in ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"):
            self.report(make("P204", f"`{call.args[0].name}` is not an HTTP method", call.args[0].span))
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
                            fix=Fix(f"did you mean `{hint}`?", entry.key.span, hint) if hint else None,
                        )
                    )
        return {"type": "http", "method": method, "url": call.args[1].value, "headers": headers, "body": body}

    # --- declarations -------------------------------------------------------------

    def folder(self, decl: ast.Node) -> Path | None:
        """Where relative paths written in `decl` resolve: its file's directory, or
        for spec text the root directory (None when there is none)."""
        file = decl.span.file
        return Path(file).resolve().parent if file != "<string>" else self.ctx.load.root_dir

    def block(self, name: str, kind: str, body: ast.Block | None) -> None:
        schema = SCHEMAS[kind]
        values = self.ctx.values.setdefault(name, {})
        spans = self.ctx.spans.setdefault(name, {})
        seen: dict[str, ast.Attribute] = {}
        for entry in body.attributes if body else ():
            key = entry.key.name
            if key in seen:
                self.report(
                    make(
                        "P205",
                        f"`{key}` is set twice",
                        entry.key.span,
                        labels=[Label(seen[key].key.span, "first set here")],
                    )
                )
                continue
            seen[key] = entry
            spec = schema.get(key)
            if spec is None or entry.quoted:
                hint = suggest(key, list(schema))
                self.report(
                    make(
                        "P201",
                        f"unknown attribute `{key}` for {kind} `{name}`",
                        entry.key.span,
                        notes=[f"{kind} attributes: " + ", ".join(f"`{k}`" for k in schema)],
                        fix=Fix(f"did you mean `{hint}`?", entry.key.span, hint) if hint else None,
                    )
                )
                continue
            spans[key] = entry.value.span
            values[key] = self.value(name, key, spec, entry.value)
        for key, spec in schema.items():
            if key not in seen:
                if spec.required:
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
        values.setdefault("until_succeeded", False)
        if body is not None and body.params and kind != "tool":
            self.report(make("P201", f"{a(kind)} has no `params`", body.params[0].span))

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
                    fix=Fix(f"did you mean `{hint}`?") if hint and sep else None,
                )
            )
        values["provider"], values["model_id"] = provider, model_id
        values["api_key_env"] = values.pop("api_key", None)
        if values.get("script") is not None and provider == "scripted":
            folder = self.folder(decl)
            values["script"] = str(folder / values["script"]) if folder else values["script"]

    def tool(self, decl: ast.ToolDecl) -> None:
        name = decl.name.name
        self.block(name, "tool", decl.body)
        values = self.ctx.values[name]
        values["description"] = decl.description.value if decl.description else ""
        values["approval"] = values["approval"] == "required"
        params = decl.body.params
        for extra in params[1:]:
            self.report(make("P205", "`params` is set twice", extra.span, labels=[Label(params[0].span, "first set here")]))
        values["parameters"] = params_schema(params[0] if params else None, self.report)

    def simple(self, decl: ast.Node) -> None:
        name = decl.name.name
        self.block(name, decl.kind, decl.body)
        self.ctx.values[name]["description"] = decl.description.value if decl.description else None

    def chain(self, decl: ast.ChainDecl) -> None:
        name = decl.name.name
        elements: list[str] = []
        inline: list[tuple[str, ast.InlineParallel]] = []
        for i, element in enumerate(decl.elements):
            if isinstance(element, ast.InlineParallel):
                pid = f"{name}/parallel#{len(inline) + 1}"
                inline.append((pid, element))
                for j, branch in enumerate(element.branches):
                    self.resolve(pid, "branches", branch, _RUNNABLE, j)
                elements.append(pid)
                self.ctx.references.append(Reference(name, "elements", pid, element.span, i))
            else:
                if self.resolve(name, "elements", element, _RUNNABLE, i):
                    elements.append(element.name)
        self.ctx.values[name] = {"elements": tuple(elements)}
        self.ctx.inline_parallels[name] = inline

    def parallel(self, decl: ast.ParallelDecl) -> None:
        name = decl.name.name
        self.block(name, "parallel", decl.body)
        branches = []
        for i, item in enumerate(decl.branches.items):
            if not isinstance(item, ast.Ref):
                self.report(make("P203", "parallel branches must be names", item.span))
                continue
            if self.resolve(name, "branches", item, _RUNNABLE, i):
                branches.append(item.name)
        self.ctx.values[name]["branches"] = tuple(branches)


def check_attributes(ctx: CompileContext) -> None:
    checker = _Checker(ctx)
    for decl in ctx.decls.values():
        if isinstance(decl, ast.ModelDecl):
            checker.model(decl)
        elif isinstance(decl, ast.ToolDecl):
            checker.tool(decl)
        elif isinstance(decl, ast.ChainDecl):
            checker.chain(decl)
        elif isinstance(decl, ast.ParallelDecl):
            checker.parallel(decl)
        else:
            checker.simple(decl)
