"""An a2abus worker in Python: the demo skills (echo, ask, stream, slow) on
the work queue of one tenant. See README.md and docs/worker-protocol.md.

Run: python worker.py (configured by the A2A_* environment variables).
"""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import sys
from typing import Any

import nats
import nats.errors
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from nats.js import JetStreamContext

import protocol as p
import skills
from config import Config
from task import Conflict, Ended, Fenced, Snapshot, Task, read_snapshot

log = logging.getLogger("a2abus.worker")

FETCH_TIMEOUT = 2.0  # seconds a pull waits for work; also the longest shutdown wait for it
CLAIM_ATTEMPTS = 16


def settled_reason(snap: Snapshot, in_seq: int) -> str | None:
    """Why the work item at in_seq has nothing left to do, if it has not."""
    st = snap.last_status
    if st is not None and st.state in p.TERMINAL:
        return f"task is {st.state}"
    if snap.last_in is not None and snap.last_in.seq > in_seq:
        return f"superseded by input {snap.last_in.seq}"
    if st is not None and st.seq > in_seq and st.state in p.INTERRUPTED:
        return f"task is {st.state}"
    return None


def make_job(ev: p.Event, snap: Snapshot) -> skills.Job:
    if ev.type == p.TYPE_CREATED:
        history = ev.body["task"].get("history") or []
        first = history[0] if history else None
        skill, args = skills.parse_skill(first)
        return skills.Job(skill, args, first, True, snap)
    skill, args = skills.infer_skill(snap)
    return skills.Job(skill, args, ev.body["message"], False, snap)


def context_id_of(ev: p.Event) -> str:
    if ev.type == p.TYPE_CREATED:
        return str(ev.body["task"].get("contextId") or "")
    return str(ev.body["message"].get("contextId") or "")


class StartError(Exception):
    pass


class Worker:
    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self.nc: NATS | None = None
        self.js: JetStreamContext | None = None
        self.ack_wait = 30.0
        self.max_deliver = 0
        self.stopping = asyncio.Event()
        # Set once the last pull is over: naks wait for it, or the pull
        # would take their items straight back.
        self.pulled = asyncio.Event()
        self.slot_freed = asyncio.Event()
        self.items: set[asyncio.Task[None]] = set()
        self.works: set[asyncio.Task[None]] = set()

    # Lifecycle.

    async def start(self) -> JetStreamContext.PullSubscription:
        """Connects, reads the consumer's AckWait and MaxDeliver, registers
        the agent card and binds the consumer."""
        cfg = self.cfg
        self.nc = await nats.connect(
            cfg.nats_url,
            user=cfg.user,
            password=cfg.password,
            inbox_prefix=cfg.inbox_prefix,
            name=f"a2abus-python-worker-{cfg.tenant}",
            max_reconnect_attempts=-1,
            error_cb=self._on_error,
        )
        self.js = self.nc.jetstream()
        try:
            info = await self.js.consumer_info(cfg.stream, cfg.consumer)
        except (OSError, nats.errors.Error) as e:
            raise StartError(f"consumer {cfg.stream}/{cfg.consumer}: {e!r} (it is provisioned by the server)") from e
        self.ack_wait = info.config.ack_wait or 30.0
        self.max_deliver = info.config.max_deliver or 0
        await self.register_card()
        psub = await self.js.pull_subscribe_bind(consumer=cfg.consumer, stream=cfg.stream)
        log.info(
            "pulling %s/%s (ack_wait %.1fs, max_deliver %d, concurrency %d)",
            cfg.stream,
            cfg.consumer,
            self.ack_wait,
            self.max_deliver,
            cfg.concurrency,
        )
        return psub

    async def serve(self, psub: JetStreamContext.PullSubscription) -> None:
        """Takes work until stop, then waits for the running items (they
        are canceled and nak'ed) and closes the connection."""
        try:
            await self.pull(psub)
        finally:
            self.pulled.set()
        if self.items:
            await asyncio.gather(*self.items, return_exceptions=True)
        await self.close(psub)
        log.info("stopped")

    async def close(self, psub: JetStreamContext.PullSubscription | None = None) -> None:
        """Flushes the acks and naks and closes the connection."""
        if self.nc is None:
            return
        try:
            # A pull subscription has no callback to drain it: unsubscribe
            # it first, then drain the rest.
            if psub is not None:
                await psub.unsubscribe()
            await self.nc.drain()
        except Exception as e:  # noqa: BLE001 - the server may be gone already
            log.warning("drain: %r; closing", e)
            await self.nc.close()

    def stop(self) -> None:
        if self.stopping.is_set():
            return
        log.info("stopping: %d items running", len(self.items))
        self.stopping.set()
        for work in self.works:
            work.cancel()

    async def _on_error(self, e: Exception) -> None:
        log.warning("nats: %s", e)

    async def register_card(self) -> None:
        assert self.js is not None
        card = {
            "name": self.cfg.agent_name,
            "description": "The a2abus demo agent, as an external worker written in Python with nats-py.",
            "version": "1.0.0",
            "skills": skills.CARD_SKILLS,
            "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"],
        }
        await self.js.publish(f"$KV.A2A_AGENTS.{self.cfg.tenant}", json.dumps(card).encode())
        log.info("registered the agent card of tenant %s", self.cfg.tenant)

    # Pulling.

    async def pull(self, psub: JetStreamContext.PullSubscription) -> None:
        while not self.stopping.is_set():
            free = self.cfg.concurrency - len(self.items)
            if free <= 0:
                self.slot_freed.clear()
                await self._wait_any(self.slot_freed)
                continue
            try:
                msgs = await psub.fetch(free, timeout=FETCH_TIMEOUT)
            except TimeoutError:
                continue
            except Exception as e:  # noqa: BLE001 - keep pulling through server hiccups
                log.warning("fetch: %s", e)
                await self._wait_any(timeout=1)
                continue
            for msg in msgs:
                if self.stopping.is_set():
                    await msg.nak()
                    continue
                item = asyncio.create_task(self.handle(msg))
                self.items.add(item)

    async def _wait_any(self, *events: asyncio.Event, timeout: float | None = None) -> None:
        """Waits for one of events or for stopping, at most timeout."""
        waits = [asyncio.create_task(e.wait()) for e in (self.stopping, *events)]
        try:
            await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waits:
                w.cancel()

    async def handle(self, msg: Msg) -> None:
        try:
            await self.process(msg)
        except Exception:
            log.exception("work item failed; nak")
            await self._settle(msg.nak())
        finally:
            self.items.discard(asyncio.current_task())
            self.slot_freed.set()

    # One work item.

    async def process(self, msg: Msg) -> None:
        assert self.nc is not None and self.js is not None
        md = msg.metadata
        in_seq, attempt = md.sequence.stream, md.num_delivered
        try:
            ev = p.decode(msg.subject, msg.headers, msg.data, in_seq)
        except p.MalformedEvent as e:
            log.error("seq=%d: undecodable work item, terminating it: %s", in_seq, e)
            await self._settle(msg.term())
            return
        ilog = ItemLog(log, {"item": f"task={ev.task} seq={in_seq} attempt={attempt}"})
        task = Task(self.nc, self.js, self.cfg.stream, ev.tenant, ev.task, context_id_of(ev))

        async def on_status(m: Msg) -> None:
            prev = p.header(m.headers, p.H_PREV)
            task.on_status(p.header(m.headers, p.H_LEASE), int(prev) if prev and prev.isdigit() else None)

        # Watch the task's status before reading it, so no cancel or
        # takeover after the read goes unseen.
        sub = await self.nc.subscribe(p.subject(ev.tenant, ev.task, "st"), cb=on_status)
        try:
            job = await self.claim(msg, ev, task, attempt, ilog)
            if job is not None:
                await self.work(msg, task, job, ilog)
        finally:
            await sub.unsubscribe()

    async def claim(self, msg: Msg, ev: p.Event, task: Task, attempt: int, ilog: ItemLog) -> skills.Job | None:
        """Reads the task and moves it to WORKING under the task's lease.
        Settles the item and returns None if there is nothing to run."""
        assert self.nc is not None
        for _ in range(CLAIM_ATTEMPTS):
            snap = await read_snapshot(self.nc, self.cfg.stream, ev.tenant, ev.task)
            if snap is None:
                ilog.warning("ack: the task has no events")
                await self._settle(msg.ack())
                return None
            if reason := settled_reason(snap, ev.seq):
                ilog.info("ack: nothing to do (%s)", reason)
                await self._settle(msg.ack())
                return None
            try:
                if self.max_deliver > 0 and attempt >= self.max_deliver:
                    await task.claim(snap.head, p.FAILED, f"the agent gave up after {attempt - 1} attempts")
                    ilog.warning("last delivery: task FAILED; ack")
                    await self._settle(msg.ack())
                    return None
                job = make_job(ev, snap)
                await task.claim(snap.head)
            except Conflict:
                continue
            turn = "first turn" if job.first_turn else "follow-up"
            ilog.info("claimed at %d (%s): skill %s", snap.head, turn, " ".join([job.skill, *job.args]))
            return job
        ilog.warning("nak: the task kept moving while claiming it")
        await self._settle(msg.nak())
        return None

    async def work(self, msg: Msg, task: Task, job: skills.Job, ilog: ItemLog) -> None:
        """Runs the job with heartbeats until it ends, is fenced or the
        worker stops, then settles the item."""
        if self.stopping.is_set():
            await self.pulled.wait()
            ilog.info("nak: shutting down")
            await self._settle(msg.nak())
            return
        run = asyncio.create_task(skills.run(task, job))
        task.on_fence = run.cancel
        if task.fenced:
            run.cancel()
        self.works.add(run)
        beat = asyncio.create_task(self.heartbeat(msg))
        try:
            await asyncio.wait({run})
        finally:
            beat.cancel()
            self.works.discard(run)

        err = None if run.cancelled() else run.exception()
        if task.fenced or isinstance(err, Fenced):
            ilog.info("fenced (canceled or taken over): ack")
        elif run.cancelled() and self.stopping.is_set():
            await self.pulled.wait()
            ilog.info("nak: shutting down")
            await self._settle(msg.nak())
            return
        elif err is not None and not isinstance(err, Ended):
            ilog.error("skill error: %r", err)
            await self.fail(task, str(err) or repr(err), ilog)
        elif not task.ended:
            await self.fail(task, "the agent ended without a final status", ilog)
        else:
            ilog.info("done: %s", task.state)
        await self._settle(msg.ack())

    async def fail(self, task: Task, reason: str, ilog: ItemLog) -> None:
        try:
            await task.status(p.FAILED, reason)
            ilog.warning("task FAILED: %s", reason)
        except (Fenced, Ended):
            pass
        except Exception as e:  # noqa: BLE001
            ilog.error("fail task: %r", e)

    async def heartbeat(self, msg: Msg) -> None:
        while True:
            await asyncio.sleep(self.ack_wait / 2)
            try:
                await msg.in_progress()
            except Exception as e:  # noqa: BLE001
                log.warning("heartbeat: %r", e)

    async def _settle(self, op: Any) -> None:
        try:
            await op
        except Exception as e:  # noqa: BLE001
            log.warning("ack work item: %r", e)


class ItemLog(logging.LoggerAdapter):  # type: ignore[type-arg]
    """Prefixes log lines with the work item."""

    def process(self, msg: Any, kwargs: Any) -> tuple[Any, Any]:
        return f"{self.extra['item']}: {msg}", kwargs  # type: ignore[index]


def setup_logging() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    logging.basicConfig(level=logging.INFO, handlers=[handler])


async def main() -> int:
    setup_logging()
    worker = Worker(Config.from_env())
    starting = asyncio.create_task(worker.start())

    def on_signal() -> None:
        if not starting.done():
            starting.cancel()  # still connecting: give up
        else:
            worker.stop()

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, on_signal)
    try:
        psub = await starting
    except asyncio.CancelledError:
        await worker.close()
        log.info("stopped before taking work")
        return 0
    except (OSError, nats.errors.Error, StartError) as e:
        log.error("start: %s", e)
        await worker.close()
        return 1
    print("ready", flush=True)
    await worker.serve(psub)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
