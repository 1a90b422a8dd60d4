"""The `python` tool: the model's code runs in a bubblewrap sandbox (sandbox_runner.py).

No network, nothing of the host but a read-only /usr, an unprivileged user in its own
namespaces, small in-memory scratch space, limits on CPU, memory (the run's as a whole),
processes, files, output and wall time. Runs take turns: one person's one at a time, a few
at once in the process. A run stopped by a limit is a result the model reads, not a failure;
only a sandbox that cannot start (or whose turn never came) is one (`python.unavailable`).
"""

from __future__ import annotations

import base64
import logging
import signal
from typing import Any

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, tool

from agent.steps import ToolFailed
from agent.tools.sandbox_runner import (
    DEFAULT_LIMITS,
    DRAIN_SECONDS,
    GRACE_SECONDS,
    KB,
    MB,
    CodeTooLong,
    Image,
    Limits,
    RunResult,
    SandboxUnavailable,
    StopReason,
    run_python,
    sandbox_available,
)

logger = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_LIMITS",
    "CodeTooLong",
    "Image",
    "Limits",
    "RunResult",
    "SandboxUnavailable",
    "StopReason",
    "describe_run",
    "make_python_tool",
    "run_artifact",
    "run_python",
    "sandbox_available",
]


def make_python_tool(*, limits: Limits = DEFAULT_LIMITS, owner: str | None = None) -> BaseTool:
    """Return the `python` tool, running each call in a sandbox with these limits; `owner`'s
    runs take turns (unnamed: each conversation's do)."""

    @tool("python", response_format="content_and_artifact")
    async def python(code: str, config: RunnableConfig) -> tuple[str, dict[str, Any]]:
        """Run Python code in a sandbox without network; print what you want to see; files
        saved in the working directory that are images come back."""
        thread = (config.get("configurable") or {}).get("thread_id")
        try:
            result = await run_python(
                code, limits=limits, owner=owner or (f"thread:{thread}" if thread else None)
            )
        except CodeTooLong as exc:
            raise ToolFailed(
                "python.too_long",
                f"The code is longer than {limits.code_bytes} bytes: send a shorter program.",
                limit=limits.code_bytes,
            ) from exc
        except SandboxUnavailable as exc:
            logger.warning("python sandbox unavailable: %s", exc)
            raise ToolFailed(
                "python.unavailable",
                "Python cannot run on this server right now: answer without running code.",
            ) from exc
        return describe_run(result, limits), run_artifact(result)

    python.description = " ".join(python.description.split())  # the docstring's indent
    # the agent's tools node waits this long for a call, its turn included (its default is
    # shorter); a turn that never comes fails first, as python.unavailable
    running = limits.wall_seconds + GRACE_SECONDS + DRAIN_SECONDS
    python.metadata = {"timeout": limits.queue_seconds + running + 5}
    return python


def describe_run(result: RunResult, limits: Limits) -> str:
    """Return what the model reads of a run: what stopped it, its output, its images."""
    lines = [_stop_sentence(result, limits)] if result.stopped else []
    if result.stopped is None and result.exit_code:
        lines.append(f"Exit code {result.exit_code}.")
    if result.stdout:
        lines += ["Output:", result.stdout.rstrip("\n")]
    if result.stderr:
        lines += ["Errors:", result.stderr.rstrip("\n")]
    if not result.stdout and not result.stderr:
        lines.append("The code printed nothing.")
    if result.images:
        names = ", ".join(f"{i.name} ({max(1, len(i.data) // KB)} KB)" for i in result.images)
        lines.append(f"Images saved: {names}.")
    if result.images_left_out:
        lines.append(
            f"{result.images_left_out} more images were left out: at most {limits.max_images}"
            " come back."
        )
    return "\n".join(lines)


def _stop_sentence(result: RunResult, limits: Limits) -> str:
    if result.stopped == "timeout":
        return f"Stopped: the code ran past {limits.wall_seconds:g} seconds."
    if result.stopped == "cpu_time":
        return f"Stopped: the code used more than {limits.cpu_seconds} seconds of CPU."
    if result.stopped == "memory":
        return f"Stopped: the code ran out of memory ({_memory_rule(result, limits)})."
    if result.stopped == "output_limit":
        return f"Stopped: the code printed more than {limits.output_bytes // KB} KB."
    try:
        return f"Stopped: the code's process was killed ({signal.Signals(result.signal).name})."
    except ValueError:
        return "Stopped: the code's process was killed."


def _memory_rule(result: RunResult, limits: Limits) -> str:
    whole = f"{limits.memory_bytes // MB} MB for the whole run"
    fence = result.fence
    if fence is None or fence.cgroup is not None:
        return whole
    return f"{whole}: {fence.process_bytes // MB} MB in each of at most {fence.processes} processes"


def run_artifact(result: RunResult) -> dict[str, Any]:
    """Return the artifact of a run: its images (base64) and what stopped it."""
    return {
        "images": [
            {
                "name": image.name,
                "content_type": image.content_type,
                "data_base64": base64.b64encode(image.data).decode("ascii"),
            }
            for image in result.images
        ],
        "stopped": result.stopped,
    }
