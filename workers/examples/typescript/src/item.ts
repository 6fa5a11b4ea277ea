// One work item, from delivery to ack (docs/worker-protocol.md): decode
// the in event, watch the task's status subject, read the task, claim it
// with a WORKING status under a fresh lease, run the skill with heartbeats,
// and settle the item.

import { randomUUID } from "node:crypto";
import { Match, type NatsConnection, type Subscription } from "@nats-io/transport-node";
import type { JsMsg } from "@nats-io/jetstream";
import {
  firstText,
  Hdr,
  isInterrupted,
  isTerminal,
  parseSubject,
  subject,
  taskFilter,
  TypeArtifact,
  TypeCreated,
  TypeInput,
  TypeStatus,
  type Artifact,
  type ArtifactBody,
  type CreatedBody,
  type InputBody,
  type Message,
  type StatusBody,
  type TaskState,
} from "./events.js";
import { errorText, log, type Fields } from "./log.js";
import { chooseSkill, runSkill, type SkillContext } from "./skills.js";
import { Conflict, type OutEvent, type StoredEvent, type TaskLog } from "./tasklog.js";

/** What every work item needs from the worker. */
export interface ItemEnv {
  nc: NatsConnection;
  log: TaskLog;
  tenant: string;
  ackWaitMs: number;
  maxDeliver: number;
  /** Aborted when the worker shuts down. */
  shutdown: AbortSignal;
}

/** The decoded in event of a work item. */
interface WorkItem {
  task: string;
  seq: number;
  attempt: number;
  input: Message | undefined;
  /** The task's first message, if the item is the created event. */
  first: Message | undefined;
  contextId: string;
}

/** The task as read with direct gets: its head and last event per kind. */
interface Snapshot {
  head: number;
  status: StoredEvent | null;
  input: StoredEvent | null;
  artifact: StoredEvent | null;
}

/** Thrown by appends of a worker that lost its task. */
export class Fenced extends Error {
  constructor() {
    super("worker fenced: task canceled or taken over");
    this.name = "Fenced";
  }
}

const maxClaimRounds = 16;
const maxReadRounds = 8;

/** Runs one work item to its ack (or nak, on shutdown). Never throws. */
export async function processItem(env: ItemEnv, msg: JsMsg): Promise<void> {
  let item: WorkItem;
  try {
    item = decodeItem(msg, env.tenant);
  } catch (err) {
    log("item undecodable: terminated", { subject: msg.subject, err: errorText(err) });
    respond(msg, "term");
    return;
  }
  let run: Run | undefined;
  const beat = setInterval(() => respond(msg, "working"), Math.max(env.ackWaitMs / 2, 50));
  try {
    run = new Run(env, item);
    await run.process(msg);
  } catch (err) {
    log("item failed to run: nak", { task: item.task, seq: item.seq, err: errorText(err) });
    respond(msg, "nak");
  } finally {
    clearInterval(beat);
    run?.close();
  }
}

/** Acks, naks, terminates or heartbeats msg; a closed connection is logged. */
function respond(msg: JsMsg, how: "ack" | "nak" | "term" | "working"): void {
  try {
    msg[how]();
  } catch (err) {
    log(`work item ${how} failed`, { subject: msg.subject, err: errorText(err) });
  }
}

function decodeItem(msg: JsMsg, tenant: string): WorkItem {
  const subj = parseSubject(msg.subject);
  if (subj === undefined || subj.kind !== "in" || subj.tenant !== tenant) {
    throw new Error(`not an in event subject of tenant ${tenant}: ${msg.subject}`);
  }
  const type = msg.headers?.get(Hdr.type, Match.IgnoreCase);
  const body: unknown = msg.json();
  const base = { task: subj.task, seq: msg.seq, attempt: msg.info.deliveryCount };
  if (type === TypeCreated) {
    const task = (body as Partial<CreatedBody>).task;
    if (task?.id !== subj.task) {
      throw new Error("created task does not match its subject");
    }
    const first = task.history?.[0];
    return { ...base, input: first, first, contextId: task.contextId ?? "" };
  }
  if (type === TypeInput) {
    const message = (body as Partial<InputBody>).message;
    if (message === undefined || message === null) {
      throw new Error("input event without message");
    }
    return { ...base, input: message, first: undefined, contextId: message.contextId ?? "" };
  }
  throw new Error(`unexpected event type ${type ?? "(none)"} on ${msg.subject}`);
}

function statusBody(ev: StoredEvent | null): StatusBody | undefined {
  const b = ev?.type === TypeStatus ? (ev.body as Partial<StatusBody> | undefined) : undefined;
  return b?.status?.state === undefined ? undefined : (b as StatusBody);
}

function artifactBody(ev: StoredEvent | null): ArtifactBody | undefined {
  const b = ev?.type === TypeArtifact ? (ev.body as Partial<ArtifactBody> | undefined) : undefined;
  return typeof b?.artifact?.artifactId === "string" ? (b as ArtifactBody) : undefined;
}

/** The state of a work item while it runs. Appends are serialized. */
class Run {
  private readonly lease = randomUUID();
  private readonly controller = new AbortController();
  private readonly sub: Subscription;
  private readonly onShutdown = (): void => this.controller.abort(new Error("shutting down"));
  private contextId: string;
  private head = 0;
  /** The sequence of this run's WORKING status; 0 until claimed. */
  private claimSeq = 0;
  /** A status from someone else was seen before the claim. */
  private foreignBeforeClaim = false;
  private final = false;
  private fenced = false;
  private lastState = "";
  private appends: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly env: ItemEnv,
    private readonly item: WorkItem,
  ) {
    this.contextId = item.contextId;
    // Watch the task's status before reading it, so that no cancel or
    // takeover after the read goes unseen.
    this.sub = env.nc.subscribe(subject(env.tenant, item.task, "st"), {
      callback: (err, m) => {
        if (err === null && m.headers?.get(Hdr.lease, Match.IgnoreCase) !== this.lease) {
          this.onForeignStatus();
        }
      },
    });
    env.shutdown.addEventListener("abort", this.onShutdown);
  }

  close(): void {
    this.env.shutdown.removeEventListener("abort", this.onShutdown);
    this.sub.unsubscribe();
  }

  log(msg: string, fields: Fields = {}): void {
    log(msg, { task: this.item.task, seq: this.item.seq, attempt: this.item.attempt, ...fields });
  }

  async process(msg: JsMsg): Promise<void> {
    const claim = await this.claim();
    if (claim.kind === "settled") {
      this.log(`item settled: ${claim.reason}: ack`);
      respond(msg, "ack");
      return;
    }
    if (claim.kind === "gave-up") {
      this.log("item on its last delivery: FAILED: ack");
      respond(msg, "ack");
      return;
    }
    const ctx = this.skillContext(claim.snap);
    const call = chooseSkill(ctx);
    this.log("item claimed: WORKING", { skill: call.name, args: call.args.join(" ") || undefined, lease: this.lease });
    let herr: unknown;
    try {
      this.controller.signal.throwIfAborted();
      await runSkill(ctx, call);
    } catch (err) {
      herr = err;
    }
    await this.appends;
    await this.settle(msg, herr);
  }

  private async settle(msg: JsMsg, herr: unknown): Promise<void> {
    if (this.env.shutdown.aborted && !this.final) {
      this.log("item interrupted by shutdown: nak");
      respond(msg, "nak");
      return;
    }
    if (this.fenced || herr instanceof Fenced) {
      this.log("item fenced (canceled or taken over): ack");
      respond(msg, "ack");
      return;
    }
    if (!this.final) {
      const reason = herr === undefined ? "the agent ended without a final status" : errorText(herr);
      if (!(await this.fail(reason))) {
        // Nothing written: let a redelivery try again.
        this.log("item failed and FAILED could not be written: nak", { err: reason });
        respond(msg, "nak");
        return;
      }
    }
    this.log(`item done: ${this.lastState}: ack`);
    respond(msg, "ack");
  }

  /** Reads the task and moves it to WORKING, unless the item is settled. */
  private async claim(): Promise<
    { kind: "settled"; reason: string } | { kind: "gave-up" } | { kind: "claimed"; snap: Snapshot }
  > {
    for (let round = 0; round < maxClaimRounds; round++) {
      const snap = await this.read();
      const reason = settledReason(snap, this.item.seq);
      if (reason !== undefined) {
        return { kind: "settled", reason };
      }
      this.contextId ||= statusBody(snap.status)?.contextId ?? "";
      try {
        if (this.item.attempt >= this.env.maxDeliver) {
          const text = `the agent gave up after ${this.item.attempt - 1} attempts`;
          await this.env.log.append(this.item.task, this.lease, this.statusEvent("TASK_STATE_FAILED", text), snap.head);
          return { kind: "gave-up" };
        }
        const seq = await this.env.log.append(this.item.task, this.lease, this.statusEvent("TASK_STATE_WORKING"), snap.head);
        this.head = this.claimSeq = seq;
        if (this.foreignBeforeClaim) {
          void this.checkFence();
        }
        return { kind: "claimed", snap };
      } catch (err) {
        if (!(err instanceof Conflict)) {
          throw err;
        }
      }
    }
    throw new Error(`claim: the task kept moving for ${maxClaimRounds} rounds`);
  }

  /** Reads the head first, then the last event of each kind. */
  private async read(): Promise<Snapshot> {
    const { log: tl, tenant } = this.env;
    const task = this.item.task;
    for (let round = 0; round < maxReadRounds; round++) {
      const head = await tl.last(taskFilter(tenant, task));
      if (head === null) {
        throw new Error("the task has no events");
      }
      const [status, input, artifact] = await Promise.all([
        tl.last(subject(tenant, task, "st")),
        tl.last(subject(tenant, task, "in")),
        tl.last(subject(tenant, task, "art")),
      ]);
      // Anything newer than the head came in between: read again.
      if (Math.max(status?.seq ?? 0, input?.seq ?? 0, artifact?.seq ?? 0) <= head.seq) {
        return { head: head.seq, status, input, artifact };
      }
    }
    throw new Error(`read: the task kept moving for ${maxReadRounds} rounds`);
  }

  private skillContext(snap: Snapshot): SkillContext {
    const st = statusBody(snap.status);
    const art = artifactBody(snap.artifact);
    return {
      input: this.item.input,
      first: this.item.first,
      lastStatusText: firstText(st?.status.message),
      lastArtifact: art && {
        artifactId: art.artifact.artifactId,
        text: firstText(art.artifact),
      },
      signal: this.controller.signal,
      status: (state, text) => this.append(this.statusEvent(state, text)),
      artifact: (a, append, lastChunk) => this.append(this.artifactEvent(a, append, lastChunk)),
    };
  }

  private statusEvent(state: TaskState, text?: string): OutEvent {
    const { task } = this.item;
    const body: StatusBody = {
      taskId: task,
      contextId: this.contextId,
      status: { state, timestamp: new Date().toISOString() },
    };
    if (text !== undefined) {
      body.status.message = {
        messageId: randomUUID(),
        role: "ROLE_AGENT",
        parts: [{ text }],
        taskId: task,
        contextId: this.contextId,
      };
    }
    return { type: TypeStatus, body };
  }

  private artifactEvent(artifact: Artifact, append: boolean, lastChunk: boolean): OutEvent {
    const body: ArtifactBody = { taskId: this.item.task, contextId: this.contextId, artifact };
    if (append) {
      body.append = true;
    }
    if (lastChunk) {
      body.lastChunk = true;
    }
    return { type: TypeArtifact, body };
  }

  /** Appends ev at the head, one append at a time. */
  private append(ev: OutEvent): Promise<void> {
    const next = this.appends.then(() => this.appendNow(ev));
    this.appends = next.catch(() => undefined);
    return next;
  }

  private async appendNow(ev: OutEvent): Promise<void> {
    for (let round = 0; ; round++) {
      if (this.fenced) {
        throw new Fenced();
      }
      if (this.final) {
        throw new Error("the work item already has its final status");
      }
      try {
        this.head = await this.env.log.append(this.item.task, this.lease, ev, this.head);
        if (ev.type === TypeStatus) {
          const state = ev.body.status.state;
          this.lastState = state;
          this.final = isTerminal(state) || isInterrupted(state);
        }
        return;
      } catch (err) {
        if (!(err instanceof Conflict) || round >= maxClaimRounds) {
          throw err;
        }
      }
      await this.rebase();
    }
  }

  /**
   * After a conflict: if a status from someone else (another lease, or none:
   * a cancel) came after our head, we are fenced; otherwise (client input)
   * go on at the new head.
   */
  private async rebase(): Promise<void> {
    const { log: tl, tenant } = this.env;
    const st = await tl.last(subject(tenant, this.item.task, "st"));
    if (st !== null && st.seq > this.head && st.lease !== this.lease) {
      this.fence();
      throw new Fenced();
    }
    const head = await tl.last(taskFilter(tenant, this.item.task));
    this.log("append conflict: retrying at the new head", { from: this.head, to: head?.seq });
    if (head !== null) {
      this.head = head.seq;
    }
  }

  private onForeignStatus(): void {
    if (this.claimSeq === 0) {
      this.foreignBeforeClaim = true;
      return;
    }
    void this.checkFence();
  }

  /** Fences the run if the task's last status after our claim is not ours. */
  private async checkFence(): Promise<void> {
    if (this.final || this.fenced) {
      return;
    }
    try {
      const st = await this.env.log.last(subject(this.env.tenant, this.item.task, "st"));
      if (st !== null && st.seq > this.claimSeq && st.lease !== this.lease && !this.final) {
        this.fence();
      }
    } catch (err) {
      this.log("fence check failed", { err: errorText(err) });
    }
  }

  private fence(): void {
    if (!this.fenced) {
      this.fenced = true;
      this.controller.abort(new Fenced());
    }
  }

  /**
   * Ends the task FAILED with reason. Reports whether the item is settled:
   * FAILED written, or the run lost the task.
   */
  private async fail(reason: string): Promise<boolean> {
    try {
      await this.append(this.statusEvent("TASK_STATE_FAILED", reason));
      return true;
    } catch (err) {
      if (err instanceof Fenced) {
        return true;
      }
      this.log("appending FAILED failed", { err: errorText(err) });
      return false;
    }
  }
}

/** Why the item needs no work, or undefined if it does. */
function settledReason(snap: Snapshot, inSeq: number): string | undefined {
  const state = statusBody(snap.status)?.status.state;
  if (isTerminal(state)) {
    return `task is ${state}`;
  }
  if ((snap.input?.seq ?? 0) > inSeq) {
    return "a newer input supersedes it";
  }
  if ((snap.status?.seq ?? 0) > inSeq && isInterrupted(state)) {
    return `task is ${state} after it`;
  }
  return undefined;
}
