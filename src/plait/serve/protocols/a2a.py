"""A `RunService` → an A2A v1 agent: the agent card from the specs, and the JSON-RPC binding over the runs.

A task is a run: its id is the run id, and the journal is the task store, so
`GetTask` after a restart still answers. Run statuses map to task states:
running → working, waiting (an ask, an approval, an unknown outcome) →
input-required, done → completed, error and max_steps → failed, cancelled →
canceled. A follow-up message to an input-required task is the decision: a
data part `{"decisions": [...]}` (the HTTP API's body) decides anything; a
lone pending item also takes plain text (an ask's answer; `approve`,
`approve same` or `reject [reason]`; `retry` or `skip`). The skill is named by the message's
`metadata.skill` (the only skill when there is one); the input is the
message's data part for a typed entry (or its text, parsed as JSON), its text
for a text entry. Each skill's input and output JSON Schemas are on the card
under the `SKILL_SCHEMAS` extension: A2A v1's skill has no field for them.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator
from typing import TYPE_CHECKING, Any

from a2a.helpers.proto_helpers import (
    get_data_parts,
    get_message_text,
    new_data_artifact,
    new_data_part,
    new_message,
    new_text_artifact,
    new_text_part,
)
from a2a.server.request_handlers import RequestHandler
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.server.routes import create_jsonrpc_routes
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentSkill,
    Artifact,
    HTTPAuthSecurityScheme,
    ListTasksResponse,
    Message,
    Role,
    SecurityRequirement,
    SecurityScheme,
    StringList,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH, PROTOCOL_VERSION_1_0, TransportProtocol
from a2a.utils.errors import (
    ExtendedAgentCardNotConfiguredError,
    InvalidParamsError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
)
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from plait import __version__
from plait.serve.protocols import tool_names
from plait.serve.service import ServiceError

if TYPE_CHECKING:
    from a2a.server.context import ServerCallContext
    from a2a.server.events.event_queue import Event
    from a2a.types.a2a_pb2 import (
        CancelTaskRequest,
        DeleteTaskPushNotificationConfigRequest,
        GetExtendedAgentCardRequest,
        GetTaskPushNotificationConfigRequest,
        GetTaskRequest,
        ListTaskPushNotificationConfigsRequest,
        ListTaskPushNotificationConfigsResponse,
        ListTasksRequest,
        SendMessageRequest,
        SubscribeToTaskRequest,
        TaskPushNotificationConfig,
    )

    from plait.serve.service import EntryInfo, RunService, RunView

__all__ = ["SKILL_SCHEMAS", "PlaitRequestHandler", "a2a_routes", "agent_card", "task_state"]

#: The card extension that carries each skill's input and output JSON Schemas.
SKILL_SCHEMAS = "https://plait.dev/a2a/skill-schemas/v1"
#: How long a blocking `SendMessage` waits for its run to stop (finish, or wait for a person).
WAIT_SECONDS = 3600.0

_STATES = {
    "running": TaskState.TASK_STATE_WORKING,
    "waiting": TaskState.TASK_STATE_INPUT_REQUIRED,
    "done": TaskState.TASK_STATE_COMPLETED,
    "error": TaskState.TASK_STATE_FAILED,
    "max_steps": TaskState.TASK_STATE_FAILED,
    "cancelled": TaskState.TASK_STATE_CANCELED,
}
_APPROVE = {"approve", "approved", "yes", "y", "ok"}
_REJECT = {"reject", "rejected", "no", "n", "deny"}


def task_state(status: str) -> TaskState:
    return _STATES.get(status, TaskState.TASK_STATE_WORKING)


def _struct(data: dict[str, Any]) -> dict[str, Any]:
    """Plain JSON for a protobuf Struct field (which takes a dict as is)."""
    return dict(json.loads(json.dumps(data, default=str)))


def _integral(value: Any) -> Any:
    """A data part's numbers come back as doubles (protobuf's Value): 3.0 → 3, so an `int` field validates."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _integral(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_integral(v) for v in value]
    return value


def _modes(schema: dict[str, Any] | None) -> list[str]:
    return ["text/plain"] if schema is None else ["application/json"]


def agent_card(service: RunService, base_url: str, *, auth: bool) -> AgentCard:
    """The card: one skill per entry, the JSON-RPC interface at `base_url`/a2a, bearer auth when required."""
    specs = service.specs()
    names = tool_names(specs)
    entries = {(s.name, e.name): e for s in specs for e in s.entries}
    skills = []
    schemas: dict[str, Any] = {}
    for name, key in names.items():
        entry = entries[key]
        skills.append(
            AgentSkill(
                id=name,
                name=name,
                description=entry.description or f"The `{key[1]}` entry of {key[0]}.plait.",
                tags=["plait", key[0]],
                input_modes=_modes(entry.input_schema),
                output_modes=_modes(entry.output_schema),
            )
        )
        schemas[name] = {"input": entry.input_schema, "output": entry.output_schema}
    title = specs[0].name if len(specs) == 1 else "plait"
    card = AgentCard(
        name=title,
        description="plait workflows: " + ", ".join(names) if names else "plait workflows",
        version=__version__,
        supported_interfaces=[
            AgentInterface(
                url=base_url.rstrip("/") + "/a2a",
                protocol_binding=TransportProtocol.JSONRPC.value,
                protocol_version=PROTOCOL_VERSION_1_0,
            )
        ],
        capabilities=AgentCapabilities(
            streaming=True,
            push_notifications=False,
            extensions=[
                AgentExtension(
                    uri=SKILL_SCHEMAS,
                    description="Each skill's input and output JSON Schema (null: plain text).",
                    required=False,
                    params=_struct(schemas),
                )
            ],
        ),
        default_input_modes=["text/plain", "application/json"],
        default_output_modes=["text/plain", "application/json"],
        skills=skills,
    )
    if auth:
        card.security_schemes["bearer"].CopyFrom(
            SecurityScheme(http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="bearer"))
        )
        card.security_requirements.append(SecurityRequirement(schemes={"bearer": StringList()}))
    return card


class PlaitRequestHandler(RequestHandler):
    """The A2A operations over a `RunService`; see the module docstring."""

    def __init__(self, service: RunService) -> None:
        self.service = service
        specs = service.specs()
        self.names = tool_names(specs)
        self.entries: dict[tuple[str, str], EntryInfo] = {(s.name, e.name): e for s in specs for e in s.entries}
        #: The context id a client gave a task; a task it did not name is its own context (the run id).
        self.contexts: dict[str, str] = {}

    # --- tasks ---

    async def on_get_task(self, params: GetTaskRequest, context: ServerCallContext) -> Task | None:
        return self.task(await self._view(params.id))

    async def on_list_tasks(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        views = await self.service.list(limit=params.page_size or 100)
        tasks = [self.task(v) for v in views]
        if params.status != TaskState.TASK_STATE_UNSPECIFIED:
            tasks = [t for t in tasks if t.status.state == params.status]
        if params.context_id:
            tasks = [t for t in tasks if t.context_id == params.context_id]
        return ListTasksResponse(tasks=tasks, page_size=len(tasks), total_size=len(tasks))

    async def on_cancel_task(self, params: CancelTaskRequest, context: ServerCallContext) -> Task | None:
        view = await self._view(params.id)
        if view.status not in ("running", "waiting"):
            state = TaskState.Name(task_state(view.status)).removeprefix("TASK_STATE_").lower()
            raise TaskNotCancelableError(message=f"task {view.id} is already {state}")
        try:
            return self.task(await self.service.cancel(view.id))
        except ServiceError as exc:  # driven by another server process
            raise TaskNotCancelableError(message=str(exc)) from None

    async def on_subscribe_to_task(
        self, params: SubscribeToTaskRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event]:
        view = await self._view(params.id)
        async for event in self._stream(view.id):
            yield event

    # --- messages ---

    async def on_message_send(self, params: SendMessageRequest, context: ServerCallContext) -> Task | Message:
        run_id = await self._submit(params.message)
        if params.HasField("configuration") and params.configuration.return_immediately:
            return self.task(await self.service.get(run_id))
        return self.task(await self.service.wait(run_id, WAIT_SECONDS))

    async def on_message_send_stream(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event]:
        run_id = await self._submit(params.message)
        async for event in self._stream(run_id):
            yield event

    async def _submit(self, message: Message) -> str:
        """Start the run a new message asks for, or decide the input-required task a follow-up answers."""
        if message.task_id:
            view = await self._view(message.task_id)
            if view.status != "waiting":
                state = TaskState.Name(task_state(view.status)).removeprefix("TASK_STATE_").lower()
                raise InvalidParamsError(
                    message=f"task {view.id} is {state}: only an input-required task takes a follow-up message"
                )
            try:
                await self.service.decide(view.id, decisions(view, message))
            except ServiceError as exc:
                raise InvalidParamsError(message=str(exc)) from None
            return view.id
        skill = self._skill(message)
        spec, entry = self.names[skill]
        try:
            run_id = await self.service.start(spec, entry, self._input(self.entries[(spec, entry)], message))
        except ServiceError as exc:
            raise InvalidParamsError(message=str(exc)) from None
        if message.context_id:
            self.contexts[run_id] = message.context_id
        return run_id

    def _skill(self, message: Message) -> str:
        named = message.metadata["skill"] if "skill" in message.metadata else None
        if isinstance(named, str) and named in self.names:
            return named
        if named is None and len(self.names) == 1:
            return next(iter(self.names))
        offered = ", ".join(sorted(self.names))
        if named is None:
            raise InvalidParamsError(message=f"name the skill in the message's metadata.skill: one of {offered}")
        raise InvalidParamsError(message=f"no skill named {named!r}: this agent offers {offered}")

    @staticmethod
    def _input(entry: EntryInfo, message: Message) -> Any:
        data = get_data_parts(message.parts)
        text = get_message_text(message)
        if entry.input_schema is None:
            return text
        if data:
            return _integral(data[0])
        try:
            return json.loads(text)
        except ValueError:
            return text  # the service names what does not fit

    # --- views ---

    async def _view(self, run_id: str) -> RunView:
        try:
            return await self.service.get(run_id)
        except KeyError:
            raise TaskNotFoundError(message=f"no task {run_id}") from None

    def task(self, view: RunView) -> Task:
        context_id = self.contexts.get(view.id, view.id)
        task = Task(
            id=view.id,
            context_id=context_id,
            status=self.status(view),
            metadata=_struct({"spec": view.spec, "entry": view.entry, "tokens": view.tokens, "cost": view.cost}),
        )
        if view.status == "done":
            task.artifacts.append(self.artifact(view))
        return task

    def status(self, view: RunView) -> TaskStatus:
        status = TaskStatus(state=task_state(view.status))
        context_id = self.contexts.get(view.id, view.id)
        if view.status == "waiting":
            lines = [_ask_line(p) for p in view.pending]
            parts = [new_text_part("\n".join(lines)), new_data_part({"pending": view.pending})]
            status.message.CopyFrom(new_message(parts, context_id=context_id, task_id=view.id, role=Role.ROLE_AGENT))
        elif view.status in ("error", "max_steps", "cancelled"):
            text = view.error or view.stop_reason or view.status
            status.message.CopyFrom(
                new_message([new_text_part(text)], context_id=context_id, task_id=view.id, role=Role.ROLE_AGENT)
            )
        return status

    def artifact(self, view: RunView) -> Artifact:
        entry = self.entries.get((view.spec, view.entry))
        if entry is not None and entry.output_schema is None and isinstance(view.output, str):
            return new_text_artifact("output", view.output, artifact_id=f"{view.id}-output")
        return new_data_artifact("output", view.output, media_type="application/json", artifact_id=f"{view.id}-output")

    async def _stream(self, run_id: str) -> AsyncIterator[Event]:
        """The task, a working update per run event (the event in its metadata), then the output and the state
        the run stands at: the stream ends when the run stops, for good or to wait for a person."""
        yield self.task(await self.service.get(run_id))
        context_id = self.contexts.get(run_id, run_id)
        async for event in self.service.events(run_id):
            if event.type == "run_end" and (await self.service.get(run_id)).status != "running":
                break  # a stop the run has not moved on from (a decision resumes it into the same journal)
            yield TaskStatusUpdateEvent(
                task_id=run_id,
                context_id=context_id,
                status=TaskStatus(state=TaskState.TASK_STATE_WORKING),
                metadata=_struct({"plait": {"seq": event.seq, "type": event.type, "path": event.path}}),
            )
        view = await self.service.get(run_id)
        if view.status == "done":
            yield TaskArtifactUpdateEvent(
                task_id=run_id, context_id=context_id, artifact=self.artifact(view), last_chunk=True
            )
        yield TaskStatusUpdateEvent(task_id=run_id, context_id=context_id, status=self.status(view))

    # --- not offered ---

    async def on_create_task_push_notification_config(
        self, params: TaskPushNotificationConfig, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        raise PushNotificationNotSupportedError()

    async def on_get_task_push_notification_config(
        self, params: GetTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        raise PushNotificationNotSupportedError()

    async def on_list_task_push_notification_configs(
        self, params: ListTaskPushNotificationConfigsRequest, context: ServerCallContext
    ) -> ListTaskPushNotificationConfigsResponse:
        raise PushNotificationNotSupportedError()

    async def on_delete_task_push_notification_config(
        self, params: DeleteTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> None:
        raise PushNotificationNotSupportedError()

    async def on_get_extended_agent_card(
        self, params: GetExtendedAgentCardRequest, context: ServerCallContext
    ) -> AgentCard:
        raise ExtendedAgentCardNotConfiguredError()


def _ask_line(item: dict[str, Any]) -> str:
    if item.get("kind") == "ask":
        return str(item.get("question") or item.get("name"))
    if item.get("kind") == "approval":
        return (
            f"Approve the call to `{item.get('name')}` with {json.dumps(item.get('arguments'))}?"
            " (approve / approve same / reject)"
        )
    if item.get("kind") == "budget":
        return (
            f"The budget of `{item.get('name')}` is spent ({item.get('limit')}: {item.get('spent')} of "
            f'{(item.get("limits") or {}).get(item.get("limit"))}): reply with new limits, e.g. {{"usd": 5}}'
        )
    return f"The outcome of `{item.get('name')}` is unknown: retry or skip?"


def decisions(view: RunView, message: Message) -> list[dict[str, Any]]:
    """A follow-up message → the decisions it makes (see the module docstring)."""
    data = [_integral(d) for d in get_data_parts(message.parts)]
    for value in data:
        if isinstance(value, dict) and isinstance(value.get("decisions"), list):
            return list(value["decisions"])
    if len(view.pending) != 1:
        ids = ", ".join(str(p.get("id")) for p in view.pending)
        raise InvalidParamsError(
            message=f'task {view.id} waits for {len(view.pending)} decisions ({ids}): send a data part {{"decisions": [...]}}'
        )
    item = view.pending[0]
    text = get_message_text(message).strip()
    if item.get("kind") == "ask":
        if data:
            answer: Any = data[0]
        else:
            answer = text
            schema = item.get("answer_schema")
            if schema is not None and schema.get("type") != "string":
                try:
                    answer = json.loads(text)
                except ValueError:
                    pass  # the service says what does not fit the answer type
        return [{"id": item["id"], "action": "answer", "answer": answer}]
    if item.get("kind") == "budget":
        limits = data[0] if data else None
        if limits is None:
            try:
                limits = json.loads(text)
            except ValueError:
                raise InvalidParamsError(
                    message=f'task {view.id} waits for a budget raise: reply with new limits, e.g. {{"usd": 5}}'
                ) from None
        return [{"id": item["id"], "action": "raise_budget", "budget": limits}]
    word, _, rest = text.partition(" ")
    word = word.lower().strip(".!")
    if item.get("kind") == "approval":
        if word == "approve_same" or (word in _APPROVE and rest.strip().lower().strip(".!") == "same"):
            # This call, and the same call again in this run (docs/language.md, `approve_same`).
            return [{"id": item["id"], "action": "approve_same"}]
        if word in _APPROVE:
            return [{"id": item["id"], "action": "approve"}]
        if word in _REJECT:
            return [{"id": item["id"], "action": "reject", **({"reason": rest.strip()} if rest.strip() else {})}]
        raise InvalidParamsError(
            message=f"task {view.id} waits for an approval: reply `approve`, `approve same` or `reject [reason]`"
        )
    if word in ("retry", "skip"):
        return [{"id": item["id"], "action": word}]
    raise InvalidParamsError(message=f"task {view.id} waits on an unknown outcome: reply `retry` or `skip`")


def a2a_routes(service: RunService, *, auth: bool) -> list[BaseRoute]:
    """The card at the well-known path (its URLs from the request, so it is right behind a proxy) and `/a2a`."""

    async def card(request: Request) -> JSONResponse:
        return JSONResponse(agent_card_to_dict(agent_card(service, str(request.base_url), auth=auth)))

    handler = PlaitRequestHandler(service)
    out: list[BaseRoute] = [Route(AGENT_CARD_WELL_KNOWN_PATH, card, methods=["GET"])]
    out.extend(create_jsonrpc_routes(handler, "/a2a", enable_v0_3_compat=True))
    return out
