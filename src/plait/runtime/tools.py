"""A tool call's name and arguments → a ToolOutcome, never an exception.

Runs `python("mod:fn")` tools (sync in a worker thread so a blocking tool never
stalls other branches, async on the loop; imported on first use with the
spec's directory first on the import path), `http(METHOD, url)` tools through
httpx with templated URL, headers and body, MCP tools through the run's
server pool (src/plait/runtime/mcp/), and functions registered in code.
Checks arguments against the tool's JSON Schema with a full validator. A tool
that raises, times out or cannot be imported becomes an error result the model
reads; only cancellation escapes.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
import types
from dataclasses import dataclass
from typing import Any, Callable
from urllib.parse import quote, quote_plus

from plait.core.kinds import ToolNode

from .providers.base import Message, TextPart
from .records import problem
from .secret_values import known, mask
from .templates import as_text, render
from .tool_modules import load as load_module

__all__ = ["ToolCall", "ToolOutcome", "ToolResult", "ToolRunner", "refusal_text"]


@dataclass(slots=True)
class ToolResult:
    """What a tool function may return to say more than its content:
    an error, state updates for the run, or messages for the model's next call."""

    content: Any = None
    is_error: bool = False
    state: dict[str, Any] | None = None
    messages: list[dict[str, Any]] | str | None = None


@dataclass(slots=True)
class ToolOutcome:
    content: str
    is_error: bool = False
    state: dict[str, Any] | None = None
    #: Messages that arrive on the next model call (`result = messages`).
    expand: list[Message] | None = None
    value: Any = None
    #: What the tool itself returned when `content` is only the placeholder for expanded messages:
    #: an `until` satisfied by the call hands this back, since no next call will deliver the messages.
    delivered: Any = None
    #: Read back from the journal on a resume, not run again: its `tool_call_end` says so, so a view marks it.
    replayed: bool = False


@dataclass(slots=True)
class ToolCall:
    """One tool call as a runner receives it."""

    tool: ToolNode
    arguments: dict[str, Any]
    timeout: float | None
    #: The run's state, read by an http tool's `{{state.<key>}}`.
    state: dict[str, Any] | None = None
    #: Journaled runs: stable per run and call position. An http tool sends it as the `Idempotency-Key` header,
    #: a python function that has an `idempotency_key` parameter receives it.
    idempotency_key: str | None = None
    #: The run's `McpPool` (src/plait/runtime/mcp/), which an MCP tool's call goes through.
    mcp: Any = None


def refusal_text(tool: str, problems: list[str]) -> str:
    return f'Invalid arguments for "{tool}": {"; ".join(problems)}.\nCall the tool again with arguments matching its schema.'


_SIMPLE_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: type(v) is str,
    # bool is an int in Python but not a JSON number; 1.0 counts as an integer in JSON Schema, so floats go the long way.
    "integer": lambda v: type(v) is int,
    "number": lambda v: type(v) in (int, float),
    "boolean": lambda v: type(v) is bool,
    "null": lambda v: v is None,
    "array": lambda v: type(v) is list,
    "object": lambda v: type(v) is dict,
}
_TOP_KEYS = frozenset({"type", "properties", "required", "additionalProperties", "description", "title", "$schema"})
_PROP_KEYS = frozenset({"type", "description", "title", "default", "examples"})


def quick_check(schema: dict[str, Any] | None) -> Callable[[Any], bool] | None:
    """A fast yes-only check for the flat schemas tool params compile to, or None when the schema is richer.

    Returning True means the full validator would accept the arguments too; a
    False only means "ask the full validator", which also writes the refusal.
    """
    if not schema or schema.get("type") != "object" or not _TOP_KEYS.issuperset(schema):
        return None
    extra = schema.get("additionalProperties", True)
    if not isinstance(extra, bool):
        return None
    checks: dict[str, Callable[[Any], bool]] = {}
    for name, prop in (schema.get("properties") or {}).items():
        if not isinstance(prop, dict) or not _PROP_KEYS.issuperset(prop) or not isinstance(prop.get("type"), str):
            return None
        test = _SIMPLE_TYPES.get(prop["type"])
        if test is None:
            return None
        checks[name] = test
    required = tuple(schema.get("required") or ())

    def check(arguments: Any) -> bool:
        if type(arguments) is not dict:
            return False
        for name in required:
            if name not in arguments:
                return False
        for name, value in arguments.items():
            test = checks.get(name)
            if test is None:
                if not extra:
                    return False
            elif not test(value):
                return False
        return True

    return check


class ToolRunner:
    """Per-run tool machinery: validator and import caches, one shared HTTP client."""

    __slots__ = ("_validators", "_functions", "_async", "_http")

    def __init__(self) -> None:
        #: tool name -> (its schema, quick check or None, full validator once needed)
        self._validators: dict[str, tuple[Any, Any, Any]] = {}
        self._functions: dict[tuple[str, str | None], Callable[..., Any]] = {}
        self._async: dict[Callable[..., Any], bool] = {}
        self._http: Any = None

    def serves(self, tool: ToolNode) -> bool:
        """Whether this runner answers calls of `tool` without running it (a cassette's recorded results, a test's
        stand-ins): then no MCP server is started for the call."""
        return False

    # -- validation -----------------------------------------------------------------

    def check(self, tool: ToolNode, arguments: dict[str, Any]) -> str | None:
        """The refusal the model should read, or None when the arguments fit the schema."""
        entry = self._validators.get(tool.name)
        if entry is None or entry[0] is not tool.parameters:  # a tool re-registered under its name
            entry = self._validators[tool.name] = (tool.parameters, quick_check(tool.parameters), None)
        _, quick, validator = entry
        # The quick check only ever answers "certainly valid"; anything else goes to the full validator.
        if quick is not None and quick(arguments):
            return None
        if validator is None:
            from jsonschema import validators

            schema = tool.parameters or {"type": "object"}
            validator = validators.validator_for(schema)(schema)
            self._validators[tool.name] = (tool.parameters, quick, validator)
        if validator.is_valid(arguments):
            return None
        problems = [problem(e) for e in sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))]
        return refusal_text(tool.name, problems)

    # -- execution --------------------------------------------------------------------

    async def execute(
        self,
        tool: ToolNode,
        arguments: dict[str, Any],
        timeout: float | None,
        state: dict[str, Any] | None = None,
        idempotency_key: str | None = None,
        mcp: Any = None,
    ) -> ToolOutcome:
        """Run one call (see `ToolCall` for what each argument is for)."""
        return await self.run(ToolCall(tool, arguments, timeout, state, idempotency_key, mcp))

    async def run(self, call: ToolCall) -> ToolOutcome:
        """Run one call: the one method a runner that answers calls its own way (a cassette's, a test's) overrides."""
        tool, timeout = call.tool, call.timeout
        try:
            value = await self._invoke(call)
        except TimeoutError:
            return ToolOutcome(f"tool `{tool.name}` timed out after {timeout:g}s", True)
        except ToolImportError as exc:
            return ToolOutcome(str(exc), True)
        except Exception as exc:  # a failing tool is a result the model can react to
            return ToolOutcome(mask(f"tool `{tool.name}` failed: {type(exc).__name__}: {exc}"), True)
        outcome = self._outcome(tool, value)
        if known():  # a server that echoes a key the run resolved must not hand it to the model
            outcome.content = mask(outcome.content)
        return outcome

    async def _invoke(self, call: ToolCall) -> Any:
        tool, arguments, timeout, mcp = call.tool, call.arguments, call.timeout, call.mcp
        # A callable registered in code is on its runtime-only record (FunctionTool); a declared tool has none.
        fn = getattr(tool, "fn", None)
        kind = tool.run.get("type") if fn is None else "function"
        if kind != "mcp":  # an MCP server applies its own schema's defaults
            arguments = _with_defaults(tool, arguments)
        if kind == "http":
            return await _bounded(self._http_call(tool, arguments, call.state, call.idempotency_key), timeout)
        if kind == "mcp":
            if mcp is None:
                return ToolResult(f"tool `{tool.name}` is an MCP tool, which runs only within a run", is_error=True)
            # The pool bounds the call itself: a timeout there is a result and a warning, as every MCP failure.
            return await mcp.call(tool.run["server"], tool.run["tool"], arguments, timeout)
        if fn is None:
            fn = self._import(tool)
        if call.idempotency_key is not None and _takes_key(fn):
            arguments = {**arguments, "idempotency_key": call.idempotency_key}
        is_async = self._async.get(fn)
        if is_async is None:
            is_async = self._async[fn] = inspect.iscoroutinefunction(fn)
        if is_async:
            coro = fn(**arguments)
            try:
                first = coro.send(None)
            except StopIteration as done:
                # Finished without suspending: no timer to arm and cancel (most in-process tools).
                return done.value
            return await _bounded(_resume(coro, first), timeout)
        value = await _bounded(asyncio.to_thread(fn, **arguments), timeout)
        if inspect.isawaitable(value):
            value = await _bounded(value, timeout)
        return value

    def _outcome(self, tool: ToolNode, value: Any) -> ToolOutcome:
        state = messages = None
        is_error = False
        if isinstance(value, ToolResult):
            state, messages, is_error, value = value.state, value.messages, value.is_error, value.content
        if tool.result == "messages" and messages is None:
            messages, value = value, None
        expand = _as_messages(messages) if messages is not None else None
        delivered = None
        if expand is not None and value is None:
            delivered = [_plain(m) for m in messages] if isinstance(messages, (list, tuple)) else messages
            value = f"(delivered as {len(expand)} message{'s' if len(expand) != 1 else ''} on the next call)"
        return ToolOutcome(as_text(value), is_error, state, expand, value, delivered)

    # -- python -----------------------------------------------------------------------

    def _import(self, tool: ToolNode) -> Callable[..., Any]:
        target = tool.run.get("target", "")
        base_dir = tool.run.get("base_dir")
        key = (target, base_dir)
        fn = self._functions.get(key)
        if fn is not None:
            return fn
        module_name, _, attr = target.partition(":")
        try:
            module = load_module(module_name, base_dir)
        except Exception as exc:
            raise ToolImportError(
                f"tool `{tool.name}`: cannot import module `{module_name}`: {type(exc).__name__}: {exc}"
            ) from None
        fn = getattr(module, attr, None)
        if not callable(fn):
            raise ToolImportError(f"tool `{tool.name}`: module `{module_name}` has no function `{attr}`")
        self._functions[key] = fn
        return fn

    # -- http ---------------------------------------------------------------------------

    async def _http_call(
        self,
        tool: ToolNode,
        arguments: dict[str, Any],
        state: dict[str, Any] | None,
        idempotency_key: str | None = None,
    ) -> Any:
        from .http_guard import DEFAULT_MAX_RESPONSE, HttpToolError, fetch

        spec = tool.run
        client = self._http
        if client is None:
            import httpx

            # Redirects are followed by the guard, which checks every hop's address.
            client = self._http = httpx.AsyncClient(follow_redirects=False, trust_env=False)
        url = _render_url(spec["url"], arguments, state)
        headers = {k: render(str(v), params=arguments, state=state) for k, v in (spec.get("headers") or {}).items()}
        if idempotency_key is not None:
            headers.setdefault("Idempotency-Key", idempotency_key)
        method = spec.get("method", "GET").upper()
        body = spec.get("body")
        content: str | None = None
        if body is not None:
            content = render(body, params=arguments, state=state, quote=_body_quote(body, headers))
        elif method not in ("GET", "HEAD", "DELETE"):
            content = json.dumps(arguments)
            headers.setdefault("content-type", "application/json")
        try:
            status, text = await fetch(
                client,
                method,
                url,
                headers,
                content,
                allow_private=bool(spec.get("allow_private")),
                max_response=int(spec.get("max_response") or DEFAULT_MAX_RESPONSE),
            )
        except HttpToolError as exc:
            return ToolResult(f"tool `{tool.name}`: {exc}", is_error=True)
        if status >= 400:
            return ToolResult(f"HTTP {status}: {text[:2000]}", is_error=True)
        if status >= 300:
            return ToolResult(f"HTTP {status}: a redirect without a Location to follow", is_error=True)
        return text

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None


class ToolImportError(Exception):
    pass


# --- http templates: each value encoded for where it stands --------------------------------


def _segment(value: str) -> str:
    # A value is one path segment: `/` is encoded, and `.`/`..` cannot climb out of the URL's path.
    quoted = quote(value, safe="")
    return quoted.replace(".", "%2E") if quoted in (".", "..") else quoted


def _render_url(template: str, arguments: dict[str, Any], state: dict[str, Any] | None) -> str:
    """The URL with values before `?` encoded as path segments and after it as query values."""
    path, mark, query = template.partition("?")
    url = render(path, params=arguments, state=state, quote=_segment)
    if mark:
        url += "?" + render(query, params=arguments, state=state, quote=lambda v: quote(v, safe=""))
    return url


def _body_quote(body: str, headers: dict[str, str]) -> Callable[[str], str] | None:
    """JSON string escaping in a JSON body, form encoding in a form body, the value as is in any other text."""
    kind = next((v.lower() for k, v in headers.items() if k.lower() == "content-type"), "")
    if "json" in kind or (not kind and body.lstrip()[:1] in ("{", "[")):
        return lambda v: json.dumps(v)[1:-1]
    if "x-www-form-urlencoded" in kind or (not kind and _FORM.fullmatch(body.strip())):
        return lambda v: quote_plus(v, safe="")
    return None


_FORM = re.compile(r"[A-Za-z0-9_.\-\[\]]+=[^&\s]*(?:&[A-Za-z0-9_.\-\[\]]+=[^&\s]*)*")


_KEYED: dict[Any, bool] = {}


def _with_defaults(tool: ToolNode, arguments: dict[str, Any]) -> dict[str, Any]:
    """The call's arguments with each declared default the model left out: `params { year: int = 2015 }` promises
    the tool 2015 when the model says nothing (an http tool's `{{year}}` would not resolve otherwise)."""
    properties = tool.parameters.get("properties") or {}
    missing = {
        name: prop["default"]
        for name, prop in properties.items()
        if name not in arguments and isinstance(prop, dict) and "default" in prop
    }
    return {**missing, **arguments} if missing else arguments


def _takes_key(fn: Callable[..., Any]) -> bool:
    """Whether a tool function declares an `idempotency_key` parameter (asked once per function)."""
    known = _KEYED.get(fn)
    if known is None:
        try:
            known = "idempotency_key" in inspect.signature(fn).parameters
        except (TypeError, ValueError):
            known = False
        _KEYED[fn] = known
    return known


async def _bounded(awaitable: Any, timeout: float | None) -> Any:
    if not timeout:
        return await awaitable
    async with asyncio.timeout(timeout):
        return await awaitable


@types.coroutine
def _resume(coro: Any, first: Any) -> Any:
    """Go on driving a coroutine that was started by hand and has just yielded `first` to its task.

    The same delegation `await` does, picking up after the first step; every
    value sent or thrown in (a cancellation, a timeout) is forwarded to it.
    """
    pending = first
    while True:
        try:
            sent = yield pending
        except GeneratorExit:
            coro.close()
            raise
        except BaseException as exc:
            try:
                pending = coro.throw(exc)
            except StopIteration as done:
                return done.value
            continue
        try:
            pending = coro.send(sent)
        except StopIteration as done:
            return done.value


def _plain(item: Any) -> Any:
    """A message as JSON data (a run's output must serialise); dicts and strings are already."""
    return {"role": item.role, "content": item.text} if isinstance(item, Message) else item


def _as_messages(value: Any) -> list[Message]:
    if isinstance(value, str):
        return [Message.user(value)]
    out = []
    for item in value:
        if isinstance(item, Message):
            out.append(item)
        elif isinstance(item, dict):
            role = item.get("role", "user")
            if role not in ("user", "assistant", "system"):
                role = "user"
            out.append(Message(role, [TextPart(as_text(item.get("content", "")))]))
        else:
            out.append(Message.user(as_text(item)))
    return out
