"""The a2abus event format: subjects, CloudEvents headers, A2A v1.0 bodies,
and reading the last event of a subject with a direct get.

The Go package events (events/codec.go) is the reference for all of this.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from nats.aio.client import Client as NATS

# Event types and the subject kind each is published on.
TYPE_CREATED = "a2a.task.created.v1"
TYPE_INPUT = "a2a.task.input.v1"
TYPE_STATUS = "a2a.task.status.v1"
TYPE_ARTIFACT = "a2a.task.artifact.v1"
KIND_OF_TYPE = {TYPE_CREATED: "in", TYPE_INPUT: "in", TYPE_STATUS: "st", TYPE_ARTIFACT: "art"}

# Headers.
H_SPECVERSION = "ce-specversion"
H_ID = "ce-id"
H_TYPE = "ce-type"
H_SOURCE = "ce-source"
H_SUBJECT = "ce-subject"
H_TIME = "ce-time"
H_CONTENT_TYPE = "content-type"
H_LEASE = "ce-a2alease"
H_PREV = "a2a-prev"
H_EXPECTED_SEQ = "Nats-Expected-Last-Subject-Sequence"
H_EXPECTED_SUBJ = "Nats-Expected-Last-Subject-Sequence-Subject"
H_MSG_ID = "Nats-Msg-Id"

# Task states.
WORKING = "TASK_STATE_WORKING"
COMPLETED = "TASK_STATE_COMPLETED"
FAILED = "TASK_STATE_FAILED"
CANCELED = "TASK_STATE_CANCELED"
REJECTED = "TASK_STATE_REJECTED"
INPUT_REQUIRED = "TASK_STATE_INPUT_REQUIRED"
AUTH_REQUIRED = "TASK_STATE_AUTH_REQUIRED"
TERMINAL = frozenset({COMPLETED, FAILED, CANCELED, REJECTED})
INTERRUPTED = frozenset({INPUT_REQUIRED, AUTH_REQUIRED})

# JetStream error codes of a failed expected-last-subject-sequence check.
WRONG_LAST_SEQUENCE = frozenset({10071, 10164})


class MalformedEvent(ValueError):
    """A message that is not a valid task event (events.Decode would refuse it)."""


def subject(tenant: str, task: str, kind: str) -> str:
    return f"a2a.evt.{tenant}.{task}.{kind}"


def task_filter(tenant: str, task: str) -> str:
    return f"a2a.evt.{tenant}.{task}.>"


def parse_subject(subj: str) -> tuple[str, str, str]:
    parts = subj.split(".")
    if len(parts) != 5 or parts[:2] != ["a2a", "evt"]:
        raise MalformedEvent(f"not an event subject: {subj!r}")
    return parts[2], parts[3], parts[4]


def header(headers: Mapping[str, str] | None, name: str) -> str | None:
    """Returns a header's value; names match without regard to case."""
    if not headers:
        return None
    if name in headers:
        return headers[name]
    lower = name.lower()
    for key, value in headers.items():
        if key.lower() == lower:
            return value
    return None


def now_rfc3339() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class Event:
    """A task event as read from the stream."""

    seq: int
    tenant: str
    task: str
    kind: str
    type: str
    lease: str | None
    headers: Mapping[str, str]
    body: dict[str, Any]

    @property
    def id(self) -> str | None:
        return header(self.headers, H_ID)

    @property
    def state(self) -> str | None:
        """The state of a status event."""
        return (self.body.get("status") or {}).get("state")

    @property
    def message_text(self) -> str:
        """The first text part of a status event's message."""
        return first_text((self.body.get("status") or {}).get("message"))


def decode(subj: str, headers: Mapping[str, str] | None, data: bytes, seq: int) -> Event:
    """Decodes and checks an event the way events.Decode does."""
    tenant, task, kind = parse_subject(subj)
    if header(headers, H_SPECVERSION) != "1.0":
        raise MalformedEvent("specversion is not 1.0")
    for required in (H_ID, H_SOURCE, H_TYPE):
        if not header(headers, required):
            raise MalformedEvent(f"{required} is missing")
    typ = header(headers, H_TYPE) or ""
    if KIND_OF_TYPE.get(typ) != kind:
        raise MalformedEvent(f"type {typ!r} on subject kind {kind!r}")
    try:
        body = json.loads(data)
    except ValueError as e:
        raise MalformedEvent(f"{typ} body: {e}") from e
    if not isinstance(body, dict):
        raise MalformedEvent(f"{typ} body is not an object")
    if typ == TYPE_CREATED and (body.get("task") or {}).get("id") != task:
        raise MalformedEvent("created task does not match subject")
    if typ == TYPE_INPUT and not isinstance(body.get("message"), dict):
        raise MalformedEvent("input without message")
    if typ == TYPE_ARTIFACT and not isinstance(body.get("artifact"), dict):
        raise MalformedEvent("artifact event without artifact")
    return Event(seq, tenant, task, kind, typ, header(headers, H_LEASE), dict(headers or {}), body)


class DirectGetError(RuntimeError):
    pass


async def last_event(nc: NATS, stream: str, subj: str, timeout: float = 5) -> Event | None:
    """Reads the last event on subj (wildcards allowed) with a direct get in
    the subject form: the subject in the API subject and an empty payload.
    None if there is none."""
    msg = await nc.request(f"$JS.API.DIRECT.GET.{stream}.{subj}", b"", timeout=timeout)
    status = header(msg.headers, "Status")
    if status == "404":
        return None
    if status:
        raise DirectGetError(f"direct get {subj}: status {status} {header(msg.headers, 'Description') or ''}")
    seq = header(msg.headers, "Nats-Sequence")
    stored = header(msg.headers, "Nats-Subject")
    if not seq or not stored:
        raise DirectGetError(f"direct get {subj}: reply without Nats-Sequence/Nats-Subject")
    return decode(stored, msg.headers, msg.data, int(seq))


def first_text(message: Mapping[str, Any] | None) -> str:
    """The first non-empty text part of a message, or ""."""
    for part in (message or {}).get("parts") or []:
        text = part.get("text") if isinstance(part, dict) else None
        if isinstance(text, str) and text:
            return text
    return ""


def agent_message(text: str, task: str, context_id: str) -> dict[str, Any]:
    return {
        "messageId": str(uuid.uuid4()),
        "taskId": task,
        "contextId": context_id,
        "role": "ROLE_AGENT",
        "parts": [{"text": text}],
    }


def status_body(task: str, context_id: str, state: str, message: dict[str, Any] | None) -> dict[str, Any]:
    status: dict[str, Any] = {"state": state, "timestamp": now_rfc3339()}
    if message is not None:
        status["message"] = message
    return {"taskId": task, "contextId": context_id, "status": status}


def artifact_body(
    task: str, context_id: str, artifact: dict[str, Any], append: bool, last_chunk: bool
) -> dict[str, Any]:
    body: dict[str, Any] = {"taskId": task, "contextId": context_id, "artifact": artifact}
    if append:
        body["append"] = True
    if last_chunk:
        body["lastChunk"] = True
    return body


def event_headers(ce_id: str, typ: str, tenant: str, task: str, lease: str) -> dict[str, str]:
    """The CloudEvents binary-mode headers of an event this worker writes."""
    return {
        H_SPECVERSION: "1.0",
        H_ID: ce_id,
        H_TYPE: typ,
        H_SOURCE: "/a2abus",
        H_SUBJECT: f"{tenant}/{task}",
        H_TIME: now_rfc3339(),
        H_CONTENT_TYPE: "application/json",
        H_LEASE: lease,
    }
