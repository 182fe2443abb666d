"""A `RunService` → the Starlette app `plait serve` runs: the HTTP API, the event stream, the studio, the protocols.

Routes (docs/serve.md): `/openapi.json`, `/specs`, `/specs/{spec}/graph.svg`,
`/runs` (POST starts, GET lists), `/runs/{id}`, `/runs/{id}/events` (SSE from
the journal), `/runs/{id}/trace`, `/runs/{id}/decisions`, `/runs/{id}/cancel`;
the studio at `/` and `/static/`; the protocol routes of
`plait.serve.protocols` (A2A, and MCP with `mcp=True`). Every error is
`{"error": "one line"}` (a decision refused because the run's spec changed,
409, adds `"changes"`). The guards (src/plait/serve/auth.py) wrap it all: the
body cap, then the bearer token. No CORS headers are sent: browsers on other
origins are refused.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from plait.serve.auth import BearerAuth, BodyCap
from plait.serve.service import RunEvent, RunService, ServiceError, SpecChanged, UnknownRun

__all__ = ["DEFAULT_MAX_BODY", "build_app"]

log = logging.getLogger("plait.serve")

#: The request body cap (`--max-body`): 1 MiB.
DEFAULT_MAX_BODY = 2**20
#: How often a server looks for runs another server on its store left (a third of a journal lease).
SWEEP_SECONDS = 10.0
#: How long an event stream may stay silent before it sends a comment line (`: keep-alive`).
KEEPALIVE_SECONDS = 15.0
#: The longest `?wait=` a request may ask for.
MAX_WAIT_SECONDS = 300.0
STATIC = Path(__file__).with_name("static")


def _json(value: Any, status: int = 200) -> Response:
    body = json.dumps(_plain(value), ensure_ascii=False, default=str)
    return Response(body, status, media_type="application/json")


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _error(status: int, message: str) -> Response:
    return _json({"error": " ".join(str(message).split())}, status)


async def _body(request: Request) -> Any:
    raw = await request.body()
    try:
        return json.loads(raw)
    except ValueError:
        raise ServiceError("the request body is not JSON") from None


def _after(request: Request) -> int | None:
    given = request.headers.get("last-event-id") or request.query_params.get("after")
    if given is None or given == "":
        return None
    try:
        return int(given)
    except ValueError:
        raise ServiceError(f"Last-Event-ID (or after) must be an event's seq, a number, not {given!r}") from None


def _wait(request: Request) -> float | None:
    given = request.query_params.get("wait")
    if given is None:
        return None
    from plait.runtime.providers.scripted import parse_duration

    try:
        seconds = parse_duration(given)
    except ValueError:
        raise ServiceError(f"wait must be a duration such as 30s or 500ms, not {given!r}") from None
    return min(seconds, MAX_WAIT_SECONDS)


def build_app(
    service: RunService, *, auth: str | None, mcp: bool = False, max_body: int = DEFAULT_MAX_BODY
) -> Starlette:
    """The app: `auth` is the bearer token every API request must carry (None: no auth, loopback only)."""
    from plait import __version__

    graphs: dict[str, bytes] = {}

    async def openapi(request: Request) -> Response:
        from plait.serve.openapi import document

        answers: dict[str, Any] = {
            f"{spec.name}.{ask}": config.answer
            for spec in service.specs()
            for ask, config in service.engine(spec.name).program.asks.items()
        }
        return _json(document(service.specs(), answers, __version__))

    async def specs(request: Request) -> Response:
        return _json(service.specs())

    async def graph(request: Request) -> Response:
        name = request.path_params["spec"]
        try:
            service.engine(name)
        except ServiceError as exc:  # the path names no served spec
            return _error(404, str(exc))
        if name not in graphs:
            from plait import render

            try:
                drawn = render(str(service.engine(name).spec), "svg")
            except Exception as exc:  # Graphviz missing (or failing): say so, never a traceback
                return _error(404, f"cannot draw {name}: {exc}")
            graphs[name] = drawn if isinstance(drawn, bytes) else drawn.encode()
        return Response(graphs[name], media_type="image/svg+xml")

    async def start(request: Request) -> Response:
        body = await _body(request)
        if not isinstance(body, dict):
            raise ServiceError('the body must be an object: {"spec": ..., "entry"?: ..., "input": ...}')
        spec = body.get("spec")
        if not isinstance(spec, str):
            names = ", ".join(s.name for s in service.specs())
            raise ServiceError(f"spec: the name of a served spec is required (one of: {names})")
        entry = body.get("entry")
        if entry is not None and not isinstance(entry, str):
            raise ServiceError("entry: the name of a runnable, or leave it out")
        waited = _wait(request)
        run_id = await service.start(spec, entry, body.get("input"))
        if waited is None:
            return _json(await service.get(run_id), 201)
        view = await service.wait(run_id, waited)
        return _json(view, 201 if view.status == "running" else 200)

    async def listing(request: Request) -> Response:
        query = request.query_params
        try:
            limit = int(query.get("limit", "100"))
        except ValueError:
            raise ServiceError("limit must be a number") from None
        return _json(await service.list(query.get("spec") or None, query.get("status") or None, limit))

    async def one(request: Request) -> Response:
        waited = _wait(request)
        if waited is None:
            return _json(await service.get(request.path_params["id"]))
        return _json(await service.wait(request.path_params["id"], waited))

    async def trace(request: Request) -> Response:
        return _json(service.trace(request.path_params["id"]))

    async def events(request: Request) -> Response:
        run_id = request.path_params["id"]
        after = _after(request)
        await service.get(run_id)  # 404 before the stream starts
        if request.query_params.get("format") == "ag-ui":
            from plait.serve.protocols import agui, missing

            if (problem := missing("agui")) is not None:
                raise ServiceError(problem)
            return agui.response(service, run_id, after)

        async def stream() -> AsyncIterator[str]:
            # The run's events come through a queue, so a quiet stretch (a run waiting for a person) can send a
            # comment line now and again: proxies and load balancers cut connections that stay silent.
            queue: asyncio.Queue[RunEvent | None] = asyncio.Queue(maxsize=256)

            async def produce() -> None:
                try:
                    async for event in service.events(run_id, after):
                        await queue.put(event)
                except Exception:  # the store went away mid-stream: end it; the client reconnects from its last id
                    log.exception("the events of run %s stopped", run_id)
                await queue.put(None)

            producer = asyncio.get_running_loop().create_task(produce())
            try:
                while True:
                    try:
                        event = await asyncio.wait_for(queue.get(), KEEPALIVE_SECONDS)
                    except asyncio.TimeoutError:
                        yield ": keep-alive\n\n"
                        continue
                    if event is None:
                        return
                    data = json.dumps(dataclasses.asdict(event), ensure_ascii=False, default=str)
                    yield f"id: {event.seq}\nevent: {event.type}\ndata: {data}\n\n"
            finally:
                producer.cancel()

        headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)

    async def decisions(request: Request) -> Response:
        body = await _body(request)
        given = body.get("decisions") if isinstance(body, dict) else None
        if not isinstance(given, list):
            raise ServiceError("decisions: a list of {id, action} objects is required")
        accept = body.get("accept_changes", False)
        if not isinstance(accept, bool):
            raise ServiceError("accept_changes: true or false")
        return _json(await service.decide(request.path_params["id"], given, accept), 202)

    async def cancel(request: Request) -> Response:
        return _json(await service.cancel(request.path_params["id"]), 202)

    async def index(request: Request) -> Response:
        page = STATIC / "index.html"
        if not page.is_file():
            return _error(404, "the studio is not installed with this package")
        return FileResponse(page)

    async def service_error(request: Request, exc: Exception) -> Response:
        return _error(400, str(exc))

    async def spec_changed(request: Request, exc: Exception) -> Response:
        changes = getattr(exc, "changes", [])
        return _json({"error": " ".join(str(exc).split()), "changes": changes}, 409)

    async def missing_run(request: Request, exc: Exception) -> Response:
        return _error(404, f"no run {exc.args[0] if exc.args else ''}")

    async def http_error(request: Request, exc: Exception) -> Response:
        status = getattr(exc, "status_code", 500)
        return _error(status, getattr(exc, "detail", "") or "error")

    async def internal(request: Request, exc: Exception) -> Response:
        log.exception("internal error on %s", request.url.path)
        return _error(500, "internal error (see the server's log)")

    routes: list[BaseRoute] = [
        Route("/", index),
        Route("/openapi.json", openapi),
        Route("/specs", specs),
        Route("/specs/{spec}/graph.svg", graph),
        Route("/runs", start, methods=["POST"]),
        Route("/runs", listing, methods=["GET"]),
        Route("/runs/{id}", one),
        Route("/runs/{id}/events", events),
        Route("/runs/{id}/trace", trace),
        Route("/runs/{id}/decisions", decisions, methods=["POST"]),
        Route("/runs/{id}/cancel", cancel, methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC, check_dir=False), name="static"),
    ]
    mounted: list[BaseRoute] = []
    try:
        from plait.serve import protocols
    except ImportError:  # the protocols package is optional
        protocols = None  # type: ignore[assignment]
    if protocols is not None:
        mounted = protocols.routes(service, mcp=mcp, auth=auth is not None)
        routes.extend(mounted)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        taken = await service.recover()
        if taken:
            log.warning("resuming %d run(s) a stopped server left: %s", len(taken), ", ".join(taken))
        # Then, now and again: a replica on the same store that died (or shut down) leaves runs this one takes up.
        sweeping = asyncio.get_running_loop().create_task(service.sweep(SWEEP_SECONDS), name="plait-serve-sweep")
        try:
            if protocols is not None:
                async with protocols.running(mounted):
                    yield
            else:
                yield
        finally:
            sweeping.cancel()
            await service.aclose()

    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        # The body cap first (it refuses before anything reads), then the token.
        middleware=[Middleware(BodyCap, limit=max_body), Middleware(BearerAuth, token=auth)],
        exception_handlers={
            SpecChanged: spec_changed,
            ServiceError: service_error,
            UnknownRun: missing_run,
            HTTPException: http_error,
            Exception: internal,
        },
    )
    return app
