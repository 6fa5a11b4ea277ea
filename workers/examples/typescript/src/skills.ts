// The demo skills, with the same texts as the Go demo agent
// (workers/demo.go), so that workers in any language can take over each
// other's tasks: echo, ask, stream and slow.

import { setTimeout as sleep } from "node:timers/promises";
import { firstText, messageText, type Artifact, type Message, type TaskState } from "./events.js";

/** What a skill sees of its work item and how it reports. */
export interface SkillContext {
  /** The message this work item carries: the first message or a follow-up. */
  input: Message | undefined;
  /** The task's first message; undefined when the item is a follow-up. */
  first: Message | undefined;
  /** The text of the task's last status message when the item was read. */
  lastStatusText: string;
  /** The task's last artifact event when the item was read. */
  lastArtifact: { artifactId: string; text: string } | undefined;
  /** Aborted when the task is canceled or taken over, or on shutdown. */
  signal: AbortSignal;
  status(state: TaskState, text?: string): Promise<void>;
  artifact(artifact: Artifact, append: boolean, lastChunk: boolean): Promise<void>;
}

export interface SkillCall {
  name: string;
  args: string[];
}

export const MaxSlowSeconds = 3600;
const defaultSlowSeconds = 5;
export const MaxStreamChunks = 100000;
export const MaxStreamIntervalMs = 60000;
const defaultStreamChunks = 10;
const defaultStreamIntervalMs = 100;
const streamStatusEvery = 50;

const progress = /^progress (\d+)\/(\d+)$/;
const streaming = /^streaming (\d+) chunks every (\d+) ms$/;
const chunk = /^chunk (\d+)\/(\d+)\n?$/;

/** The skills, for the agent card. */
export const skillCards = [
  {
    id: "echo",
    name: "Echo",
    description: "Completes at once with an artifact holding the parts of your message.",
    tags: ["demo", "echo"],
    examples: ["echo hello"],
  },
  {
    id: "ask",
    name: "Ask",
    description: "Asks you a question (INPUT_REQUIRED) and completes with your answer.",
    tags: ["demo", "multi-turn"],
    examples: ["ask"],
  },
  {
    id: "stream",
    name: "Stream",
    description: `stream <chunks> <interval-ms>: streams one artifact in that many chunks (default ${defaultStreamChunks}, at most ${MaxStreamChunks}), one every interval (default ${defaultStreamIntervalMs} ms), with status messages; resumes where it stopped after a restart.`,
    tags: ["demo", "streaming"],
    examples: ["stream 20 100"],
  },
  {
    id: "slow",
    name: "Slow",
    description: `Works for the given number of seconds (default ${defaultSlowSeconds}, at most ${MaxSlowSeconds}), posting progress every second, then completes. Survives server restarts.`,
    tags: ["demo", "long-running"],
    examples: ["slow 10"],
  },
];

/**
 * The skill of a message: its metadata "skill" (then every word is an
 * argument, as in the Go demo), else the first word of its first text part,
 * lower-cased; echo if there is none.
 */
export function parseSkill(m: Message | undefined): SkillCall {
  const words = firstText(m).split(/\s+/).filter((w) => w !== "");
  const meta = m?.metadata?.["skill"];
  if (typeof meta === "string" && meta !== "") {
    return { name: meta.toLowerCase(), args: words };
  }
  const [name, ...args] = words;
  return name === undefined ? { name: "echo", args: [] } : { name: name.toLowerCase(), args };
}

/**
 * The skill of a work item. A follow-up (an input event) does not carry the
 * task's first message, and a worker may read only the last event of a
 * subject, so the skill a follow-up continues is inferred from the task's
 * last events: a slow progress message, a stream chunk, or else ask (the
 * only skill that waits for input). The Python worker infers the same way.
 */
export function chooseSkill(ctx: SkillContext): SkillCall {
  if (ctx.first !== undefined) {
    return parseSkill(ctx.first);
  }
  const p = progress.exec(ctx.lastStatusText);
  if (p) {
    return { name: "slow", args: [p[2]!] };
  }
  const art = ctx.lastArtifact;
  const c = art?.artifactId === "stream" ? chunk.exec(art.text) : null;
  if (c) {
    const s = streaming.exec(ctx.lastStatusText);
    return { name: "stream", args: [c[2]!, s ? s[2]! : String(defaultStreamIntervalMs)] };
  }
  return { name: "ask", args: [] };
}

export async function runSkill(ctx: SkillContext, call: SkillCall): Promise<void> {
  switch (call.name) {
    case "ask":
      return ask(ctx);
    case "slow":
      return slow(ctx, call.args);
    case "stream":
      return stream(ctx, call.args);
    default:
      return echo(ctx);
  }
}

async function echo(ctx: SkillContext): Promise<void> {
  const parts = ctx.input?.parts ?? [];
  await ctx.artifact({ artifactId: "echo", name: "echo", parts }, false, true);
  await ctx.status("TASK_STATE_COMPLETED");
}

async function ask(ctx: SkillContext): Promise<void> {
  if (ctx.first !== undefined) {
    await ctx.status("TASK_STATE_INPUT_REQUIRED", "What is your name?");
    return;
  }
  const greeting = `Hello, ${messageText(ctx.input).trim()}!`;
  await ctx.artifact({ artifactId: "answer", name: "answer", parts: [{ text: greeting }] }, false, true);
  await ctx.status("TASK_STATE_COMPLETED", greeting);
}

/** A whole number from min to max, as Go's strconv.Atoi reads it. */
function wholeNumber(s: string, min: number, max: number): number | undefined {
  if (!/^[+-]?\d+$/.test(s)) {
    return undefined;
  }
  const n = Number(s);
  return n >= min && n <= max ? n : undefined;
}

async function slow(ctx: SkillContext, args: string[]): Promise<void> {
  let secs = defaultSlowSeconds;
  if (args[0] !== undefined) {
    const n = wholeNumber(args[0], 0, MaxSlowSeconds);
    if (n === undefined) {
      await ctx.status(
        "TASK_STATE_REJECTED",
        `slow takes a whole number of seconds from 0 to ${MaxSlowSeconds}`,
      );
      return;
    }
    secs = n;
  }
  // Resume: the last progress message says how far an earlier attempt got.
  const m = progress.exec(ctx.lastStatusText);
  let done = m ? Math.min(Number(m[1]), secs) : 0;
  while (done < secs) {
    await sleep(1000, undefined, { signal: ctx.signal });
    done++;
    await ctx.status("TASK_STATE_WORKING", `progress ${done}/${secs}`);
  }
  const out = `worked for ${secs} seconds`;
  await ctx.artifact({ artifactId: "result", name: "result", parts: [{ text: out }] }, false, true);
  await ctx.status("TASK_STATE_COMPLETED");
}

async function stream(ctx: SkillContext, args: string[]): Promise<void> {
  const usage = `usage: stream <chunks 1..${MaxStreamChunks}> <interval-ms 0..${MaxStreamIntervalMs}>`;
  const chunks = args[0] === undefined ? defaultStreamChunks : wholeNumber(args[0], 1, MaxStreamChunks);
  const interval =
    args[1] === undefined ? defaultStreamIntervalMs : wholeNumber(args[1], 0, MaxStreamIntervalMs);
  if (chunks === undefined || interval === undefined) {
    await ctx.status("TASK_STATE_REJECTED", usage);
    return;
  }
  // Resume: the last chunk written says how far an earlier attempt got.
  const last = ctx.lastArtifact?.artifactId === "stream" ? chunk.exec(ctx.lastArtifact.text) : null;
  const done = last ? Math.min(Number(last[1]), chunks) : 0;
  if (done === 0) {
    await ctx.status("TASK_STATE_WORKING", `streaming ${chunks} chunks every ${interval} ms`);
  }
  for (let i = done + 1; i <= chunks; i++) {
    if (interval > 0) {
      await sleep(interval, undefined, { signal: ctx.signal });
    }
    ctx.signal.throwIfAborted();
    const art: Artifact = { artifactId: "stream", parts: [{ text: `chunk ${i}/${chunks}\n` }] };
    if (i === 1) {
      art.name = "stream";
    }
    await ctx.artifact(art, i > 1, i === chunks);
    if (i % streamStatusEvery === 0 && i < chunks) {
      await ctx.status("TASK_STATE_WORKING", `streamed ${i}/${chunks} chunks`);
    }
  }
  await ctx.status("TASK_STATE_COMPLETED", `streamed ${chunks} chunks`);
}
