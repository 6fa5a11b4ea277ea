"""A work item's handle on its task: appends chained on the task's head
(optimistic concurrency), fencing, and the snapshot read before claiming."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import nats.errors
from nats.aio.client import Client as NATS
from nats.js import JetStreamContext
from nats.js.errors import APIError

import protocol as p


class Conflict(Exception):
    """Someone appended to the task after the head this worker read."""


class Fenced(Exception):
    """The worker lost the task: it was canceled or taken over."""


class Ended(Exception):
    """The work item already has its final or interrupted status."""


@dataclass(frozen=True)
class Snapshot:
    """What a worker reads of a task before claiming it: its head and the
    last event of each kind (direct gets of the last message only)."""

    head: int
    last_status: p.Event | None
    last_in: p.Event | None
    last_artifact: p.Event | None


async def read_snapshot(nc: NATS, stream: str, tenant: str, task: str) -> Snapshot | None:
    """Reads the head first and then the last event of each kind; reads
    again if the task moved in between. None if the task has no events."""
    while True:
        head = await p.last_event(nc, stream, p.task_filter(tenant, task))
        if head is None:
            return None
        st, inp, art = await asyncio.gather(
            p.last_event(nc, stream, p.subject(tenant, task, "st")),
            p.last_event(nc, stream, p.subject(tenant, task, "in")),
            p.last_event(nc, stream, p.subject(tenant, task, "art")),
        )
        if all(ev is None or ev.seq <= head.seq for ev in (st, inp, art)):
            return Snapshot(head.seq, st, inp, art)


class Task:
    """Appends a work item's events to its task. Appends are serialized;
    each one expects the head the previous one made."""

    def __init__(self, nc: NATS, js: JetStreamContext, stream: str, tenant: str, task_id: str, context_id: str) -> None:
        self._nc, self._js, self._stream = nc, js, stream
        self.tenant, self.id, self.context_id = tenant, task_id, context_id
        self.lease = str(uuid.uuid4())
        self.head = 0
        self.claim_seq = 0  # the sequence of this lease's first event
        self.state: str | None = None  # the last status this lease wrote
        self.ended = False
        self.fenced = False
        self.on_fence: Callable[[], object] = lambda: None  # cancels the running skill
        self._lock = asyncio.Lock()
        self._foreign_prevs: list[int | None] = []

    # Appends.

    async def status(self, state: str, text: str | None = None) -> None:
        """Appends a status update, with an agent message if text is given."""
        msg = p.agent_message(text, self.id, self.context_id) if text is not None else None
        body = p.status_body(self.id, self.context_id, state, msg)
        await self._append(p.TYPE_STATUS, body)
        self.state = state
        if state in p.TERMINAL or state in p.INTERRUPTED:
            self.ended = True

    async def artifact(self, artifact: dict[str, Any], append: bool = False, last_chunk: bool = False) -> None:
        """Appends an artifact, or with append a chunk of it."""
        await self._append(p.TYPE_ARTIFACT, p.artifact_body(self.id, self.context_id, artifact, append, last_chunk))

    async def claim(self, head: int, state: str = p.WORKING, text: str | None = None) -> None:
        """Appends the first status of this lease at head. Raises Conflict if
        the task moved: the caller reads it again."""
        self.head = head
        await self.status(state, text)

    async def _append(self, typ: str, body: dict[str, Any]) -> None:
        async with self._lock:
            if self.fenced:
                raise Fenced
            if self.ended:
                raise Ended
            ce_id = str(uuid.uuid4())
            kind = p.KIND_OF_TYPE[typ]
            data = json.dumps(body, separators=(",", ":")).encode()
            timeouts = 0
            while True:
                headers = p.event_headers(ce_id, typ, self.tenant, self.id, self.lease)
                headers[p.H_EXPECTED_SEQ] = str(self.head)
                headers[p.H_EXPECTED_SUBJ] = p.task_filter(self.tenant, self.id)
                headers[p.H_PREV] = str(self.head)
                if kind == "st":
                    headers[p.H_MSG_ID] = ce_id
                try:
                    ack = await self._js.publish(
                        p.subject(self.tenant, self.id, kind), data, timeout=5, stream=self._stream, headers=headers
                    )
                except nats.errors.TimeoutError:
                    # The event may be stored: publish it again; the retry
                    # conflicts if it was, and the rebase finds it.
                    timeouts += 1
                    if timeouts >= 3:
                        raise
                    continue
                except APIError as e:
                    if e.err_code not in p.WRONG_LAST_SEQUENCE:
                        raise
                    if not self.claim_seq:
                        raise Conflict from e
                    if await self._rebase(ce_id):
                        return
                    continue
                self.head = ack.seq
                if not self.claim_seq:
                    self.claim_seq = ack.seq
                    self._check_foreign()
                return

    async def _rebase(self, ce_id: str) -> bool:
        """After a wrong-last-sequence: fences the worker if a status of
        another lease (or of none: a cancel) was written after the head;
        otherwise moves the head on (client input) for a retry. Returns
        True if the event was stored already (a retried publish)."""
        while True:
            head = await p.last_event(self._nc, self._stream, p.task_filter(self.tenant, self.id))
            st = await p.last_event(self._nc, self._stream, p.subject(self.tenant, self.id, "st"))
            if head is None:  # the task's events aged out of the stream
                self._fence()
                raise Fenced
            if st is not None and st.seq > head.seq:
                continue  # the task moved between the two reads
            stored = ce_id in (head.id, st.id if st else None)
            if not stored and st is not None and st.seq > self.head and st.lease != self.lease:
                self._fence()
                raise Fenced
            self.head = head.seq
            return stored

    # Fencing.

    def on_status(self, lease: str | None, prev: int | None) -> None:
        """Called for each status published on the task's .st subject. A
        status of another lease written after this lease's claim (its
        a2a-prev is at or after the claim) means the worker lost the task."""
        if lease == self.lease or self.ended:
            return
        self._foreign_prevs.append(prev)
        self._check_foreign()

    def _check_foreign(self) -> None:
        if not self.claim_seq:
            return
        if any(prev is None or prev >= self.claim_seq for prev in self._foreign_prevs):
            self._fence()
        self._foreign_prevs.clear()

    def _fence(self) -> None:
        if not self.fenced:
            self.fenced = True
            self.on_fence()
