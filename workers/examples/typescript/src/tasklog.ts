// Reads and appends of task events with only the operations a worker is
// allowed: direct gets of the last message on a subject (subject form,
// empty payload) and JetStream publishes with an expected last sequence.

import { randomUUID } from "node:crypto";
import { Empty, headers, Match, type MsgHdrs, type NatsConnection } from "@nats-io/transport-node";
import { JetStreamApiError, type JetStreamClient } from "@nats-io/jetstream";
import {
  Hdr,
  Source,
  subject,
  taskFilter,
  TypeArtifact,
  TypeStatus,
  type ArtifactBody,
  type StatusBody,
} from "./events.js";

/** An event read back from the stream. body is the parsed JSON, unchecked. */
export interface StoredEvent {
  seq: number;
  subject: string;
  type: string;
  lease?: string;
  body: unknown;
}

/** An event to append. Status events are deduplicated by their id. */
export type OutEvent =
  | { type: typeof TypeStatus; body: StatusBody }
  | { type: typeof TypeArtifact; body: ArtifactBody };

/** The task's head moved: someone appended after the expected sequence. */
export class Conflict extends Error {
  constructor(subj: string, head: number) {
    super(`append to ${subj} at ${head}: task head moved`);
    this.name = "Conflict";
  }
}

// JetStream errors of a failed expected-last-subject-sequence check: 10071
// on single-replica streams, 10164 on replicated ones.
const wrongLastSequence = new Set([10071, 10164]);

const requestTimeoutMs = 5000;

export class TaskLog {
  constructor(
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly stream: string,
    private readonly tenant: string,
  ) {}

  /** The last event on subj (wildcards allowed), or null if there is none. */
  async last(subj: string): Promise<StoredEvent | null> {
    const m = await this.nc.request(`$JS.API.DIRECT.GET.${this.stream}.${subj}`, Empty, {
      timeout: requestTimeoutMs,
    });
    const h = m.headers;
    if (m.data.length === 0 && h !== undefined && h.code !== 0 && h.code !== 200) {
      if (h.code === 404) {
        return null;
      }
      throw new Error(`direct get ${subj}: ${h.code} ${h.description}`);
    }
    const seq = Number(get(h, "Nats-Sequence"));
    if (!Number.isSafeInteger(seq) || seq < 1) {
      throw new Error(`direct get ${subj}: bad Nats-Sequence header`);
    }
    let body: unknown;
    try {
      body = JSON.parse(new TextDecoder().decode(m.data));
    } catch {
      body = undefined;
    }
    return {
      seq,
      subject: get(h, "Nats-Subject") ?? subj,
      type: get(h, Hdr.type) ?? "",
      lease: unescape(get(h, Hdr.lease)),
      body,
    };
  }

  /**
   * Appends ev to the task at head under lease and returns its sequence.
   * Throws Conflict if head is not the task's last sequence.
   */
  async append(task: string, lease: string, ev: OutEvent, head: number): Promise<number> {
    const kind = ev.type === TypeStatus ? "st" : "art";
    const subj = subject(this.tenant, task, kind);
    const id = randomUUID();
    const h = headers();
    h.set(Hdr.specVersion, "1.0");
    h.set(Hdr.id, id);
    h.set(Hdr.type, ev.type);
    h.set(Hdr.source, Source);
    h.set(Hdr.subject, `${this.tenant}/${task}`);
    h.set(Hdr.time, new Date().toISOString());
    h.set(Hdr.contentType, "application/json");
    h.set(Hdr.lease, lease);
    h.set(Hdr.prev, String(head));
    try {
      const ack = await this.js.publish(subj, JSON.stringify(ev.body), {
        headers: h,
        // Status updates carry Nats-Msg-Id, so a retried publish that was
        // stored already is acked as a duplicate; artifact chunks do not.
        msgID: ev.type === TypeStatus ? id : undefined,
        expect: {
          streamName: this.stream,
          lastSubjectSequence: head,
          lastSubjectSequenceSubject: taskFilter(this.tenant, task),
        },
        timeout: requestTimeoutMs,
      });
      return ack.seq;
    } catch (err) {
      if (err instanceof JetStreamApiError && wrongLastSequence.has(err.code)) {
        throw new Conflict(subj, head);
      }
      throw err;
    }
  }
}

function get(h: MsgHdrs | undefined, key: string): string | undefined {
  const v = h?.get(key, Match.IgnoreCase);
  return v === undefined || v === "" ? undefined : v;
}

// Header values may be percent-encoded (CloudEvents NATS binding).
function unescape(v: string | undefined): string | undefined {
  if (v === undefined || !v.includes("%")) {
    return v;
  }
  try {
    return decodeURIComponent(v);
  } catch {
    return v;
  }
}
