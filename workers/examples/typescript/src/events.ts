// The a2abus task events: subjects, CloudEvents types and the A2A v1.0
// JSON bodies (camelCase, TASK_STATE_*, ROLE_*), as in the Go package
// events (events/codec.go, events/events.go).

export type TaskState =
  | "TASK_STATE_SUBMITTED"
  | "TASK_STATE_WORKING"
  | "TASK_STATE_INPUT_REQUIRED"
  | "TASK_STATE_AUTH_REQUIRED"
  | "TASK_STATE_COMPLETED"
  | "TASK_STATE_FAILED"
  | "TASK_STATE_CANCELED"
  | "TASK_STATE_REJECTED";

export interface Part {
  text?: string;
  data?: unknown;
  url?: string;
  raw?: string;
  filename?: string;
  mediaType?: string;
  metadata?: Record<string, unknown>;
}

export interface Message {
  messageId: string;
  role: string;
  parts: Part[];
  taskId?: string;
  contextId?: string;
  metadata?: Record<string, unknown>;
}

export interface TaskStatus {
  state: TaskState;
  message?: Message;
  timestamp?: string;
}

export interface Artifact {
  artifactId: string;
  name?: string;
  description?: string;
  parts: Part[];
  metadata?: Record<string, unknown>;
}

export interface Task {
  id: string;
  contextId: string;
  status: TaskStatus;
  history?: Message[];
  artifacts?: Artifact[];
}

/** Body of a2a.task.created.v1. */
export interface CreatedBody {
  task: Task;
  dialect?: string;
}

/** Body of a2a.task.input.v1. */
export interface InputBody {
  message: Message;
}

/** Body of a2a.task.status.v1 (A2A TaskStatusUpdateEvent). */
export interface StatusBody {
  taskId: string;
  contextId: string;
  status: TaskStatus;
  metadata?: Record<string, unknown>;
}

/** Body of a2a.task.artifact.v1 (A2A TaskArtifactUpdateEvent). */
export interface ArtifactBody {
  taskId: string;
  contextId: string;
  artifact: Artifact;
  append?: boolean;
  lastChunk?: boolean;
}

export const TypeCreated = "a2a.task.created.v1";
export const TypeInput = "a2a.task.input.v1";
export const TypeStatus = "a2a.task.status.v1";
export const TypeArtifact = "a2a.task.artifact.v1";

export type Kind = "in" | "st" | "art";

// CloudEvents binary-mode headers and the transport headers of an append.
export const Hdr = {
  specVersion: "ce-specversion",
  id: "ce-id",
  type: "ce-type",
  source: "ce-source",
  subject: "ce-subject",
  time: "ce-time",
  contentType: "content-type",
  lease: "ce-a2alease",
  prev: "a2a-prev",
} as const;

/** ce-source of every event, as the Go encoder writes it. */
export const Source = "/a2abus";

export function subject(tenant: string, task: string, kind: Kind): string {
  return `a2a.evt.${tenant}.${task}.${kind}`;
}

/** The wildcard subject of every event of a task. */
export function taskFilter(tenant: string, task: string): string {
  return `a2a.evt.${tenant}.${task}.>`;
}

/** Splits a2a.evt.<tenant>.<task>.<kind>; undefined if it is not one. */
export function parseSubject(subj: string): { tenant: string; task: string; kind: string } | undefined {
  const t = subj.split(".");
  if (t.length !== 5 || t[0] !== "a2a" || t[1] !== "evt") {
    return undefined;
  }
  return { tenant: t[2]!, task: t[3]!, kind: t[4]! };
}

const terminal: ReadonlySet<TaskState> = new Set([
  "TASK_STATE_COMPLETED",
  "TASK_STATE_FAILED",
  "TASK_STATE_CANCELED",
  "TASK_STATE_REJECTED",
]);

export function isTerminal(s: TaskState | undefined): boolean {
  return s !== undefined && terminal.has(s);
}

export function isInterrupted(s: TaskState | undefined): boolean {
  return s === "TASK_STATE_INPUT_REQUIRED" || s === "TASK_STATE_AUTH_REQUIRED";
}

/** The text of the message's text parts, in order. */
export function messageText(m: Message | undefined): string {
  return (m?.parts ?? []).map((p) => p.text ?? "").join("");
}

/** The text of the first non-empty text part of a message or artifact. */
export function firstText(m: { parts?: Part[] } | undefined): string {
  return (m?.parts ?? []).find((p) => typeof p.text === "string" && p.text !== "")?.text ?? "";
}
