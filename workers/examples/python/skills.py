"""The demo skills, with the texts of the Go demo agent (workers/demo.go), so
workers of any language can take over each other's tasks."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import protocol as p
from task import Snapshot, Task

MAX_SLOW_SECONDS = 3600
DEFAULT_SLOW_SECONDS = 5
MAX_STREAM_CHUNKS = 100000
MAX_STREAM_INTERVAL_MS = 60000
DEFAULT_STREAM_CHUNKS = 10
DEFAULT_STREAM_INTERVAL_MS = 100
STREAM_STATUS_EVERY = 50

_INT = re.compile(r"^[+-]?[0-9]+$")  # what Go's strconv.Atoi accepts
_PROGRESS = re.compile(r"^progress ([0-9]+)/([0-9]+)$")
_CHUNK = re.compile(r"^chunk ([0-9]+)/([0-9]+)\n?$")
_STREAMING = re.compile(r"^streaming [0-9]+ chunks every ([0-9]+) ms$")

CARD_SKILLS: list[dict[str, Any]] = [
    {
        "id": "echo",
        "name": "Echo",
        "description": "Completes at once with an artifact holding the parts of your message.",
        "tags": ["demo", "echo"],
        "examples": ["echo hello"],
    },
    {
        "id": "ask",
        "name": "Ask",
        "description": "Asks you a question (INPUT_REQUIRED) and completes with your answer.",
        "tags": ["demo", "multi-turn"],
        "examples": ["ask"],
    },
    {
        "id": "stream",
        "name": "Stream",
        "description": (
            f"stream <chunks> <interval-ms>: streams one artifact in that many chunks (default "
            f"{DEFAULT_STREAM_CHUNKS}, at most {MAX_STREAM_CHUNKS}), one every interval (default "
            f"{DEFAULT_STREAM_INTERVAL_MS} ms), with status messages; resumes where it stopped after a restart."
        ),
        "tags": ["demo", "streaming"],
        "examples": ["stream 20 100"],
    },
    {
        "id": "slow",
        "name": "Slow",
        "description": (
            f"Works for the given number of seconds (default {DEFAULT_SLOW_SECONDS}, at most "
            f"{MAX_SLOW_SECONDS}), posting progress every second, then completes. Survives server restarts."
        ),
        "tags": ["demo", "long-running"],
        "examples": ["slow 10"],
    },
]


@dataclass(frozen=True)
class Job:
    """One work item as the skills see it."""

    skill: str
    args: list[str]
    input: dict[str, Any] | None  # the message the item carries
    first_turn: bool  # the item created the task
    snapshot: Snapshot  # the task as read before the claim


def parse_skill(message: dict[str, Any] | None) -> tuple[str, list[str]]:
    """The skill is the first word of the first text part, or the message
    metadata "skill"; the other words are its arguments."""
    if message is None:
        return "echo", []
    words = p.first_text(message).split()
    meta = (message.get("metadata") or {}).get("skill")
    if isinstance(meta, str) and meta:
        return meta.lower(), words
    if not words:
        return "echo", []
    return words[0].lower(), words[1:]


def infer_skill(snap: Snapshot) -> tuple[str, list[str]]:
    """The skill of a task that a follow-up (an input event) continues.

    The task's first message is out of reach (a worker may only read the
    last event of a subject), so the skill is inferred from the last events:
    slow progress, a stream chunk, or else the answer to ask (the only skill
    that asks for input)."""
    if snap.last_status is not None and (m := _PROGRESS.match(snap.last_status.message_text)):
        return "slow", [m.group(2)]
    if (chunk := _stream_chunk(snap)) is not None:
        interval = str(DEFAULT_STREAM_INTERVAL_MS)
        if snap.last_status is not None and (m := _STREAMING.match(snap.last_status.message_text)):
            interval = m.group(1)
        return "stream", [str(chunk[1]), interval]
    return "ask", []


def _stream_chunk(snap: Snapshot) -> tuple[int, int] | None:
    """The last chunk (i, N) of the stream artifact, if there is one."""
    art = snap.last_artifact
    if art is None or (art.body.get("artifact") or {}).get("artifactId") != "stream":
        return None
    m = _CHUNK.match(p.first_text(art.body["artifact"]))
    return (int(m.group(1)), int(m.group(2))) if m else None


def _int_arg(s: str) -> int | None:
    return int(s) if _INT.match(s) else None


async def _ticks(interval: float) -> AsyncIterator[None]:
    """Yields every interval seconds, first after one interval."""
    loop = asyncio.get_running_loop()
    next_at = loop.time()
    while True:
        next_at = max(next_at + interval, loop.time())
        await asyncio.sleep(next_at - loop.time())
        yield


async def echo(task: Task, job: Job) -> None:
    parts = (job.input or {}).get("parts") or []
    await task.artifact({"artifactId": "echo", "name": "echo", "parts": parts}, last_chunk=True)
    await task.status(p.COMPLETED)


async def ask(task: Task, job: Job) -> None:
    if job.first_turn:
        await task.status(p.INPUT_REQUIRED, "What is your name?")
        return
    parts = (job.input or {}).get("parts") or []
    answer = "".join(part.get("text") or "" for part in parts if isinstance(part, dict))
    greeting = f"Hello, {answer.strip()}!"
    await task.artifact({"artifactId": "answer", "name": "answer", "parts": [{"text": greeting}]}, last_chunk=True)
    await task.status(p.COMPLETED, greeting)


async def slow(task: Task, job: Job) -> None:
    secs = DEFAULT_SLOW_SECONDS
    if job.args:
        n = _int_arg(job.args[0])
        if n is None or not 0 <= n <= MAX_SLOW_SECONDS:
            await task.status(p.REJECTED, f"slow takes a whole number of seconds from 0 to {MAX_SLOW_SECONDS}")
            return
        secs = n
    done = 0
    last = job.snapshot.last_status
    if last is not None and (m := _PROGRESS.match(last.message_text)):
        done = int(m.group(1))
    if done < secs:
        async for _ in _ticks(1.0):
            done += 1
            await task.status(p.WORKING, f"progress {done}/{secs}")
            if done >= secs:
                break
    await task.artifact(
        {"artifactId": "result", "name": "result", "parts": [{"text": f"worked for {secs} seconds"}]},
        last_chunk=True,
    )
    await task.status(p.COMPLETED)


async def stream(task: Task, job: Job) -> None:
    chunks, interval = DEFAULT_STREAM_CHUNKS, DEFAULT_STREAM_INTERVAL_MS
    usage = f"usage: stream <chunks 1..{MAX_STREAM_CHUNKS}> <interval-ms 0..{MAX_STREAM_INTERVAL_MS}>"
    if job.args:
        n = _int_arg(job.args[0])
        if n is None or not 1 <= n <= MAX_STREAM_CHUNKS:
            await task.status(p.REJECTED, usage)
            return
        chunks = n
    if len(job.args) > 1:
        n = _int_arg(job.args[1])
        if n is None or not 0 <= n <= MAX_STREAM_INTERVAL_MS:
            await task.status(p.REJECTED, usage)
            return
        interval = n
    chunk = _stream_chunk(job.snapshot)
    done = chunk[0] if chunk else 0
    if done == 0:
        await task.status(p.WORKING, f"streaming {chunks} chunks every {interval} ms")
    ticks = _ticks(interval / 1000) if interval > 0 else None
    for i in range(done + 1, chunks + 1):
        if ticks is not None:
            await anext(ticks)
        else:
            await asyncio.sleep(0)  # let a cancel in
        art: dict[str, Any] = {"artifactId": "stream", "parts": [{"text": f"chunk {i}/{chunks}\n"}]}
        if i == 1:
            art["name"] = "stream"
        await task.artifact(art, append=i > 1, last_chunk=i == chunks)
        if i % STREAM_STATUS_EVERY == 0 and i < chunks:
            await task.status(p.WORKING, f"streamed {i}/{chunks} chunks")
    await task.status(p.COMPLETED, f"streamed {chunks} chunks")


SKILLS: dict[str, Callable[[Task, Job], Awaitable[None]]] = {
    "echo": echo,
    "ask": ask,
    "slow": slow,
    "stream": stream,
}


async def run(task: Task, job: Job) -> None:
    """Runs the job's skill; unknown skills echo."""
    await SKILLS.get(job.skill, echo)(task, job)
