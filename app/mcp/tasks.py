"""Deep research as an MCP task: the tasks extension of the 2026-07-28 revision
(`io.modelcontextprotocol/tasks`, SEP-2663), over the research jobs Corpus keeps already.

A client that declares the extension on its `tools/call` of `deep_research` gets a task handle
at once (`resultType: "task"`, the job's id as `taskId`) instead of waiting; it polls
`tasks/get` (from any replica: the job is a row in PostgreSQL) until the task is `completed`
with the tool's result inlined, and may `tasks/cancel` it, which stops the run. Clients that do
not declare it, and every 2025-11-25 client, keep `job_id` with `research_result`: the SDK
dispatches no `tasks/*` request on 2025-11-25 and sieves a `tools/call` result there to a
`CallToolResult` (docs/adr/0027).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Extension, MethodBinding, require_client_extension
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, CallToolRequestParams, CallToolResult, TextContent
from mcp_types import RequestParams
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from app.asking import records
from app.asking import service as asking_service
from app.asking.schemas import Answer, ResearchJob
from app.errors import AppError, NotFound
from app.mcp.tools import caller
from app.resources import Resources

TASKS = "io.modelcontextprotocol/tasks"
# A deep run takes minutes: polling every few seconds is plenty.
POLL_INTERVAL_MS = 3000


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
    if job.status == "failed" and job.error == records.CANCELLED:
        return {**task, "status": "cancelled", "statusMessage": records.CANCELLED}
    return {
        **task,
        "status": "completed",
        "result": _tool_result(asking_service.finished_answer(job)),
    }


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
        current = self._resources()
        try:
            principal = caller()
            started = await asking_service.research(
                current.asking(), current.jobs, principal, question, wait=False
            )
            assert started.job_id is not None
            job = await asking_service.research_job(current.asking(), principal, started.job_id)
        except AppError as exc:
            # As the tool would have said it.
            text = f"Error executing tool {params.name}: {exc.code}: {exc.message}"
            return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
        # Durable before it is announced: the job's row is committed, any replica answers.
        return {**_task(job, current.settings.public_url), "resultType": "task"}

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
