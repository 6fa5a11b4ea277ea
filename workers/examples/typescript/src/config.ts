// The worker's configuration: the environment variables every a2abus
// example worker reads (docs/worker-protocol.md).

export interface Config {
  natsUrl: string;
  user?: string;
  password?: string;
  tenant: string;
  stream: string;
  consumer: string;
  inboxPrefix: string;
  concurrency: number;
  agentName: string;
}

const tokenPattern = /^[A-Za-z0-9_-]{1,64}$/;

function env(name: string): string | undefined {
  const v = process.env[name]?.trim();
  return v === "" ? undefined : v;
}

function positiveInt(name: string, fallback: number): number {
  const v = env(name);
  if (v === undefined) {
    return fallback;
  }
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) {
    throw new Error(`${name}=${v}: want a whole number from 1`);
  }
  return n;
}

/** Reads the configuration from the environment. */
export function loadConfig(): Config {
  const tenant = env("A2A_TENANT") ?? "default";
  if (!tokenPattern.test(tenant)) {
    throw new Error(`A2A_TENANT=${tenant}: want 1 to 64 of [A-Za-z0-9_-]`);
  }
  return {
    natsUrl: env("A2A_NATS_URL") ?? "nats://127.0.0.1:4222",
    user: env("A2A_NATS_USER"),
    password: env("A2A_NATS_PASSWORD"),
    tenant,
    stream: env("A2A_STREAM") ?? "A2A_EVENTS",
    consumer: env("A2A_CONSUMER") ?? `agent-${tenant}`,
    inboxPrefix: env("A2A_INBOX_PREFIX") ?? `_INBOX_${tenant}`,
    concurrency: positiveInt("A2A_CONCURRENCY", 16),
    agentName: env("A2A_AGENT_NAME") ?? "a2abus TypeScript worker",
  };
}
