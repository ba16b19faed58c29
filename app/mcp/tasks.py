"""Deep research as an MCP task, on both revisions Corpus serves, over the research jobs it keeps
already (a task's id is its job's id, so any replica answers for it).

- 2026-07-28: the tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663). A client that
  declares it on its `tools/call` of `deep_research` gets a task handle at once
  (`resultType: "task"`); it polls `tasks/get` until the task is `completed` with the tool's
  result inlined, and may `tasks/cancel` it, which stops the run (`ResearchTasks`, an SDK
  `Extension`).
- 2025-11-25: that revision's own, experimental tasks. The server declares `tasks` in its
  `initialize` capabilities and `deep_research` says `execution.taskSupport: "optional"`; a
  `tools/call` with a `task` field gets a `CreateTaskResult`, then `tasks/get`, `tasks/result`
  (which waits for the end) and `tasks/cancel` (`LegacyResearchTasks`, an SDK
  `ServerMiddleware`: the SDK's method tables leave 2025-11-25's tasks out and sieve a
  `tools/call` result there to a `CallToolResult`, and only a middleware's own result escapes
  that sieve; docs/adr/0034).

Any other client keeps `job_id` with `research_result`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Extension, MethodBinding, require_client_extension
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, CallToolRequestParams, CallToolResult, TextContent
from mcp_types import RequestParams
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from app.asking import records
from app.asking import service as asking_service
from app.asking.schemas import Answer, ResearchJob
from app.errors import AppError, NotFound
from app.mcp.tools import caller
from app.resources import Resources

TASKS = "io.modelcontextprotocol/tasks"
# The revision whose core had tasks (experimental there; 2026-07-28 moved them to the extension).
LEGACY = "2025-11-25"
RELATED_TASK = "io.modelcontextprotocol/related-task"
# A deep run takes minutes: polling every few seconds is plenty.
POLL_INTERVAL_MS = 3000
# How often a waiting `tasks/result` looks at a job another replica runs.
RESULT_POLL_S = 1.0


class TaskParams(RequestParams):
    """`tasks/get` and `tasks/cancel`: the task's id."""

    task_id: str


class UpdateParams(TaskParams):
    """`tasks/update`: answers to a task's input requests (ours never asks for any)."""

    input_responses: dict[str, Any] | None = None


def _timestamp(value: datetime) -> str:
    return value.isoformat().replace("+00:00", "Z")


def _tool_result(answer: Answer) -> dict[str, Any]:
    """The `CallToolResult` that `deep_research` itself would have returned."""
    result = CallToolResult(
        content=[TextContent(type="text", text=answer.model_dump_json())],
        structured_content=answer.model_dump(mode="json"),
    )
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


def _answer(job: ResearchJob, base_url: str) -> dict[str, Any]:
    """A finished job's `deep_research` result, its citations' links absolute as the tool's."""
    return _tool_result(asking_service.finished_answer(job).linked(base_url))


def _task(job: ResearchJob, base_url: str) -> dict[str, Any]:
    """A research job as the extension's `DetailedTask`: a job that failed is a completed
    task whose result says why (the spec keeps `failed` for protocol errors), one cancelled by
    its owner a cancelled task."""
    task: dict[str, Any] = {
        "taskId": str(job.id),
        "createdAt": _timestamp(job.created_at),
        "lastUpdatedAt": _timestamp(job.finished_at or job.created_at),
        "ttlMs": None,  # kept until housekeeping or its owner removes it
        "pollIntervalMs": POLL_INTERVAL_MS,
    }
    if job.status == "running":
        return {**task, "status": "working"}
    if _cancelled(job):
        return {**task, "status": "cancelled", "statusMessage": records.CANCELLED}
    return {**task, "status": "completed", "result": _answer(job, base_url)}


def _legacy_task(job: ResearchJob) -> dict[str, Any]:
    """A research job as 2025-11-25's `Task` (its result is `tasks/result`'s): completed or
    cancelled alike as in the extension."""
    status = "working" if job.status == "running" else "completed"
    task: dict[str, Any] = {
        "taskId": str(job.id),
        "status": "cancelled" if _cancelled(job) else status,
        "createdAt": _timestamp(job.created_at),
        "lastUpdatedAt": _timestamp(job.finished_at or job.created_at),
        "ttl": None,
        "pollInterval": POLL_INTERVAL_MS,
    }
    if _cancelled(job):
        task["statusMessage"] = records.CANCELLED
    return task


def _cancelled(job: ResearchJob) -> bool:
    return job.status == "failed" and job.error == records.CANCELLED


async def _start(current: Resources, tool: str, question: str) -> ResearchJob | CallToolResult:
    """Start a research job for the caller without waiting on it; a refusal as the tool would
    have said it."""
    try:
        principal = caller()
        started = await asking_service.research(
            current.asking(), current.jobs, principal, question, wait=False
        )
        assert started.job_id is not None
        return await asking_service.research_job(current.asking(), principal, started.job_id)
    except AppError as exc:
        text = f"Error executing tool {tool}: {exc.code}: {exc.message}"
        return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def _declared(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether this request may be answered with a task: a 2026-07-28 request whose client
    declared the extension on it (a server MUST NOT send a task to any other)."""
    if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return False
    capabilities = ctx.session.client_capabilities
    return bool(capabilities and capabilities.extensions and TASKS in capabilities.extensions)


def _unknown(task_id: str) -> MCPError:
    return MCPError(code=INVALID_PARAMS, message=f"Failed to retrieve task: no task {task_id!r}")


class ResearchTasks(Extension):
    """The tasks extension for `deep_research`. `resources` is read per call (the lifespan
    opens them after the app is built)."""

    identifier = TASKS

    def __init__(self, resources: Callable[[], Resources]) -> None:
        self._resources = resources

    def methods(self) -> Sequence[MethodBinding]:
        modern = frozenset(MODERN_PROTOCOL_VERSIONS)
        return (
            MethodBinding("tasks/get", TaskParams, self._get, protocol_versions=modern),
            MethodBinding("tasks/cancel", TaskParams, self._cancel, protocol_versions=modern),
            MethodBinding("tasks/update", UpdateParams, self._update, protocol_versions=modern),
        )

    async def intercept_tool_call(
        self,
        params: CallToolRequestParams,
        ctx: ServerRequestContext[Any, Any],
        call_next: CallNext,
    ) -> HandlerResult:
        question = (params.arguments or {}).get("question")
        if params.name != "deep_research" or not _declared(ctx):
            return await call_next(ctx)
        if not isinstance(question, str) or not question:
            return await call_next(ctx)  # the tool's own argument errors
        started = await _start(self._resources(), params.name, question)
        if isinstance(started, CallToolResult):
            return started
        # Durable before it is announced: the job's row is committed, any replica answers.
        return {**_task(started, self._resources().settings.public_url), "resultType": "task"}

    async def _job(self, ctx: ServerRequestContext[Any, Any], task_id: str) -> ResearchJob:
        require_client_extension(ctx, TASKS)
        try:
            return await asking_service.research_job(self._resources().asking(), caller(), task_id)
        except NotFound:
            raise _unknown(task_id) from None

    async def _get(self, ctx: ServerRequestContext[Any, Any], params: TaskParams) -> HandlerResult:
        job = await self._job(ctx, params.task_id)
        return _task(job, self._resources().settings.public_url)

    async def _cancel(
        self, ctx: ServerRequestContext[Any, Any], params: TaskParams
    ) -> HandlerResult:
        await self._job(ctx, params.task_id)
        current = self._resources()
        await asking_service.cancel_research(
            current.asking(), current.jobs, caller(), params.task_id
        )
        return {}

    async def _update(
        self, ctx: ServerRequestContext[Any, Any], params: UpdateParams
    ) -> HandlerResult:
        await self._job(ctx, params.task_id)
        return {}  # a research task never asks for input: nothing is outstanding


class LegacyParams(RequestParams):
    """2025-11-25's `tasks/get`, `tasks/result` and `tasks/cancel`: the task's id."""

    task_id: str


class LegacyResearchTasks:
    """2025-11-25's tasks for `deep_research`, as an SDK `ServerMiddleware` (it runs before the
    SDK's own validation and result sieve, which know no tasks on that revision). Every other
    request, and every request of another revision, passes through untouched."""

    def __init__(self, resources: Callable[[], Resources]) -> None:
        self._resources = resources

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if ctx.method == "initialize":
            return _offering_tasks(await call_next(ctx))
        if ctx.protocol_version != LEGACY:
            return await call_next(ctx)
        params: Mapping[str, Any] = ctx.params or {}
        if ctx.method == "tools/list":
            return _research_optionally_a_task(await call_next(ctx))
        if ctx.method == "tools/call" and params.get("name") == "deep_research":
            question = (params.get("arguments") or {}).get("question")
            if isinstance(params.get("task"), dict) and isinstance(question, str) and question:
                started = await _start(self._resources(), "deep_research", question)
                if isinstance(started, CallToolResult):
                    return started
                return {"task": _legacy_task(started)}
            return await call_next(ctx)  # a plain call, or the tool's own argument errors
        if ctx.method == "tasks/get":
            return _legacy_task(await self._job(params))
        if ctx.method == "tasks/result":
            return await self._result(params)
        if ctx.method == "tasks/cancel":
            return await self._cancel(params)
        return await call_next(ctx)

    async def _job(self, params: Mapping[str, Any]) -> ResearchJob:
        try:
            task_id = LegacyParams.model_validate(params, by_name=False).task_id
        except ValidationError:
            raise MCPError(code=INVALID_PARAMS, message="taskId is required") from None
        try:
            return await asking_service.research_job(self._resources().asking(), caller(), task_id)
        except NotFound:
            raise _unknown(task_id) from None

    async def _result(self, params: Mapping[str, Any]) -> HandlerResult:
        """The tool's result once the task ends: waits for it, as the revision says."""
        job = await self._job(params)
        while job.status == "running":
            await self._resources().jobs.settle(job.id, RESULT_POLL_S)
            job = await self._job(params)
        if _cancelled(job):
            raise MCPError(code=INVALID_PARAMS, message=f"Task {str(job.id)!r} was cancelled")
        result = _answer(job, self._resources().settings.public_url)
        return {**result, "_meta": {RELATED_TASK: {"taskId": str(job.id)}}}

    async def _cancel(self, params: Mapping[str, Any]) -> HandlerResult:
        job = await self._job(params)
        if job.status != "running":
            status = _legacy_task(job)["status"]
            raise MCPError(
                code=INVALID_PARAMS,
                message=f"Cannot cancel task: already in terminal status {status!r}",
            )
        current = self._resources()
        await asking_service.cancel_research(current.asking(), current.jobs, caller(), str(job.id))
        return _legacy_task(await self._job(params))


def _offering_tasks(result: HandlerResult) -> HandlerResult:
    """A 2025-11-25 `initialize` result that declares tasks for `tools/call` (and their
    cancellation; not `tasks/list`: a task is known by the handle its call returned)."""
    if not isinstance(result, dict) or result.get("protocolVersion") != LEGACY:
        return result
    capabilities = dict(result.get("capabilities") or {})
    capabilities["tasks"] = {"cancel": {}, "requests": {"tools": {"call": {}}}}
    return {**result, "capabilities": capabilities}


def _research_optionally_a_task(result: HandlerResult) -> HandlerResult:
    """2025-11-25's `tools/list` with `deep_research` saying it may run as a task."""
    if not isinstance(result, dict):
        return result
    tools = [
        {**tool, "execution": {"taskSupport": "optional"}}
        if tool.get("name") == "deep_research"
        else tool
        for tool in result.get("tools", [])
    ]
    return {**result, "tools": tools}
