"""The worker's configuration, read from the environment (see README.md)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

_TOKEN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass(frozen=True)
class Config:
    nats_url: str
    user: str | None
    password: str | None
    tenant: str
    stream: str
    consumer: str
    inbox_prefix: str
    concurrency: int
    agent_name: str

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> Config:
        tenant = env.get("A2A_TENANT") or "default"
        if not _TOKEN.match(tenant):
            raise ValueError(f"A2A_TENANT {tenant!r} is not 1 to 64 of [A-Za-z0-9_-]")
        concurrency = int(env.get("A2A_CONCURRENCY") or "16")
        if concurrency < 1:
            raise ValueError("A2A_CONCURRENCY must be at least 1")
        return cls(
            nats_url=env.get("A2A_NATS_URL") or "nats://127.0.0.1:4222",
            user=env.get("A2A_NATS_USER") or None,
            password=env.get("A2A_NATS_PASSWORD") or None,
            tenant=tenant,
            stream=env.get("A2A_STREAM") or "A2A_EVENTS",
            consumer=env.get("A2A_CONSUMER") or f"agent-{tenant}",
            inbox_prefix=env.get("A2A_INBOX_PREFIX") or f"_INBOX_{tenant}",
            concurrency=concurrency,
            agent_name=env.get("A2A_AGENT_NAME") or "a2abus Python demo agent",
        )
