"""Python tools and code steps → P317/P318/P319 when their module, function or signature is wrong, found statically.

Why: a typo in `python("module:function")` used to pass `check`, and the run
then failed on the first call with only "tool failed". The module is looked
for as a file beside the spec (the runtime puts the spec's folder first on the
import path) or under the folder `plait` was pointed at, read and parsed with
`ast`, never imported. A module found nowhere there is looked up by name on
the checking interpreter's path without running it
(`importlib.machinery.PathFinder.find_spec` only searches the file system); an
installed package found that way is not read further. Found nowhere: an error
in a `plait 0.2` file, a warning in 0.1. Where the function has type hints,
its parameters must match the tool's `params`: names, required-ness, and basic
types.
"""

from __future__ import annotations

import ast as pyast
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from plait.core.codes import declare, make
from plait.core.diagnostics import Diagnostic, Fix, Severity, did_you_mean
from plait.core.source import Span

from ..context import CompileContext
from ..schema import suggest
from ..draft import NOTHING

# The codes this module raises; their documentation is explain/<code>.md beside it.
P317 = declare(
    "P317", "python-module-not-found", Severity.ERROR, "a python tool's module is not beside the spec nor installed"
)
P318 = declare("P318", "python-function-not-found", Severity.ERROR, "a python tool's module defines no such function")
P319 = declare(
    "P319",
    "python-signature-mismatch",
    Severity.ERROR,
    "a python function's type hints disagree with the tool's `params`",
)

__all__ = ["CODE", "python_module"]

CODE = "P317"

#: Python annotations that name one JSON Schema type.
_HINTS = {
    "str": "string",
    "int": "integer",
    "float": "number",
    "bool": "boolean",
    "list": "array",
    "dict": "object",
    "List": "array",
    "Dict": "object",
    "Sequence": "array",
    "Mapping": "object",
}


def _module_file(module: str, folders: list[Path]) -> Path | None:
    parts = module.split(".")
    for folder in folders:
        base = folder.joinpath(*parts)
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return candidate
    return None


def _installed(module: str) -> bool:
    """Whether the checking interpreter could import `module`'s top-level package, found without running any code."""
    top = module.split(".", 1)[0]
    if top in sys.builtin_module_names:
        return True
    from importlib.machinery import PathFinder

    try:
        return PathFinder.find_spec(top) is not None
    except (ImportError, ValueError, OSError):
        return False


def _functions(tree: pyast.Module) -> dict[str, pyast.FunctionDef | pyast.AsyncFunctionDef | None]:
    """Top-level names a module defines: functions with their definitions, other bindings with None."""
    found: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, pyast.FunctionDef | pyast.AsyncFunctionDef):
            found[node.name] = node
        elif isinstance(node, pyast.ClassDef):
            found[node.name] = None
        elif isinstance(node, pyast.Assign):
            for target in node.targets:
                if isinstance(target, pyast.Name):
                    found[target.id] = None
        elif isinstance(node, pyast.AnnAssign) and isinstance(node.target, pyast.Name):
            found[node.target.id] = None
        elif isinstance(node, pyast.ImportFrom | pyast.Import):
            for alias in node.names:
                found[(alias.asname or alias.name).split(".")[0]] = None
    return found


def _hint_type(annotation: pyast.expr | None) -> str | None:
    """The JSON type a simple annotation names (`str`, `int | None`, `Optional[list[str]]`), else None."""
    if annotation is None:
        return None
    if isinstance(annotation, pyast.Constant) and isinstance(annotation.value, str):
        try:
            annotation = pyast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return None
    if isinstance(annotation, pyast.BinOp) and isinstance(annotation.op, pyast.BitOr):
        sides = [_hint_type(annotation.left), _hint_type(annotation.right)]
        real = [s for s in sides if s != "null"]
        return real[0] if len(real) == 1 else None
    if isinstance(annotation, pyast.Constant) and annotation.value is None:
        return "null"
    if isinstance(annotation, pyast.Subscript):
        base = annotation.value
        name = base.id if isinstance(base, pyast.Name) else base.attr if isinstance(base, pyast.Attribute) else ""
        if name == "Optional":
            return _hint_type(annotation.slice)
        return _HINTS.get(name)
    if isinstance(annotation, pyast.Name):
        return _HINTS.get(annotation.id)
    if isinstance(annotation, pyast.Attribute):
        return _HINTS.get(annotation.attr)
    return None


def _compatible(declared: str | None, hinted: str) -> bool:
    if declared is None:
        return True
    return declared == hinted or (declared == "integer" and hinted == "number")


def _signature(
    ctx: CompileContext, owner: str, fn: pyast.FunctionDef | pyast.AsyncFunctionDef, span: Span, target: str
) -> list[Diagnostic]:
    """P319 findings for a tool whose function has type hints that disagree with its `params`."""
    args = fn.args
    named = args.posonlyargs + args.args + args.kwonlyargs
    if not any(a.annotation is not None for a in named) and fn.returns is None:
        return []  # no hints: the function says nothing to check against
    schema = ctx.values.get(owner, NOTHING).get("parameters") or {}
    properties: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", ()))
    positional = args.posonlyargs + args.args
    defaults = {a.arg for a in positional[len(positional) - len(args.defaults) :]} if args.defaults else set()
    defaults |= {a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None}
    params = {a.arg: a for a in named if a.arg not in ("self", "cls")}
    found: list[Diagnostic] = []

    def bad(message: str, fix: str) -> None:
        found.append(make("P319", message, span, notes=[f"`{target}` is defined at line {fn.lineno}"], fix=Fix(fix)))

    for name in properties:
        if name not in params and args.kwarg is None:
            hint = suggest(name, list(params))
            bad(
                f"`{target}` takes no parameter `{name}`, which tool `{owner}` declares",
                f"rename the function's parameter to `{name}`" if hint else f"add `{name}` to the function",
            )
    for name, arg in params.items():
        if name not in properties:
            if name not in defaults:
                bad(
                    f"`{target}` requires `{name}`, which tool `{owner}` does not declare in `params`",
                    f"declare `{name}` in `params`, or give it a default in the function",
                )
            continue
        if name not in required and name not in defaults:
            bad(
                f"`{name}` is optional in tool `{owner}`'s `params`, but `{target}` requires it",
                f"give `{name}` a default in the function, or make it required in `params`",
            )
        hinted = _hint_type(arg.annotation)
        declared = properties[name].get("type")
        if hinted is not None and hinted != "null" and not _compatible(declared, hinted):
            bad(
                f"`{name}` is `{declared}` in tool `{owner}`'s `params`, but `{target}` hints `{hinted}`",
                "make the types agree: change the hint or the parameter's type",
            )
    return found


def _check(ctx: CompileContext, owner: str, run: dict, span: Span, is_tool: bool) -> list[Diagnostic]:
    target = run["target"]
    module, _, function = target.partition(":")
    folders = [Path(run["base_dir"])] if run.get("base_dir") else []
    root = ctx.load.root_dir
    if root is not None and root not in folders:
        folders.append(Path(root))
    file = _module_file(module, folders)
    if file is None:
        if _installed(module):
            return []
        where = " or ".join(f"`{f}`" for f in folders) or "the spec's folder"
        d = make(
            CODE,
            f"module `{module}` of `{target}` is not a file in the spec's folder nor an installed package",
            span,
            notes=[f"looked for `{module.replace('.', '/')}.py` under {where}, then on the import path"],
            fix=Fix(f"create `{module.replace('.', '/')}.py` beside the spec, or fix the module name"),
        )
        if not ctx.strict:
            d = replace(
                d,
                severity=Severity.WARNING,
                notes=d.notes + ("a warning in a 0.1 file; `plait 0.2` makes it an error",),
            )
        return [d]
    try:
        tree = pyast.parse(file.read_text(encoding="utf-8", errors="replace"), filename=str(file))
    except (SyntaxError, ValueError, OSError) as error:
        line = getattr(error, "lineno", None)
        at = f" (line {line})" if line else ""
        return [
            make(
                "P318",
                f"`{file.name}` does not parse{at}, so `{function}` cannot be found in it",
                span,
                fix=Fix(f"fix the syntax error in `{file.name}`"),
            )
        ]
    defined = _functions(tree)
    if function not in defined:
        hint = suggest(function, [n for n, v in defined.items() if v is not None])
        return [
            make(
                "P318",
                f"`{file.name}` defines no function `{function}`",
                span,
                notes=["functions there: " + (", ".join(f"`{n}`" for n, v in defined.items() if v) or "none")],
                fix=did_you_mean(hint, span, f'"{module}:{hint}"'),
            )
        ]
    fn = defined[function]
    if is_tool and fn is not None:
        return _signature(ctx, owner, fn, span, target)
    return []


def function_of(ctx: CompileContext, run: dict) -> pyast.FunctionDef | pyast.AsyncFunctionDef | None:
    """The parsed definition `run`'s python target names, when its module is a file in the spec's folders."""
    module, _, function = run["target"].partition(":")
    folders = [Path(run["base_dir"])] if run.get("base_dir") else []
    if ctx.load.root_dir is not None:
        folders.append(Path(ctx.load.root_dir))
    file = _module_file(module, folders)
    if file is None:
        return None
    try:
        tree = pyast.parse(file.read_text(encoding="utf-8", errors="replace"), filename=str(file))
    except (SyntaxError, ValueError, OSError):
        return None
    return _functions(tree).get(function)


def code_step_inputs(fn: pyast.FunctionDef | pyast.AsyncFunctionDef, fields: dict[str, bool]) -> list[str]:
    """Problems calling `fn` with keyword arguments `fields` (name -> always given), when `fn` has type hints."""
    args = fn.args
    named = args.posonlyargs + args.args + args.kwonlyargs
    if not any(a.annotation is not None for a in named) and fn.returns is None:
        return []
    positional = args.posonlyargs + args.args
    defaults = {a.arg for a in positional[len(positional) - len(args.defaults) :]} if args.defaults else set()
    defaults |= {a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None}
    params = [a.arg for a in named if a.arg not in ("self", "cls")]
    found = []
    if args.kwarg is None:
        found += [f"it receives `{name}`, which the function does not take" for name in fields if name not in params]
    for name in params:
        if name not in defaults and not fields.get(name, False):
            found.append(f"the function requires `{name}`, which its input does not always give")
    return found


def python_module(ctx: CompileContext) -> None:
    for name, decl in ctx.decls.items():
        if decl.kind not in ("tool", "step", "agent"):
            continue
        for key in ("run", "validate"):  # a tool's or code step's function, a step's or agent's validator
            run = ctx.values.get(name, NOTHING).get(key)
            if not isinstance(run, dict) or run.get("type") != "python":
                continue
            span = ctx.spans.get(name, {}).get(key, decl.name.span)
            entry = decl.body.get(key)
            if entry is not None and getattr(entry.value, "args", None):
                span = entry.value.args[0].span  # the "module:function" string itself
            ctx.diagnostics.extend(_check(ctx, name, run, span, decl.kind == "tool"))
