// An a2abus worker in TypeScript: binds the tenant's durable consumer,
// registers the agent card, and runs the demo skills on the work items it
// pulls (docs/worker-protocol.md). Logs go to stderr; "ready" goes to
// stdout once it is pulling.

import { setMaxListeners } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { jetstream, type Consumer, type JetStreamClient } from "@nats-io/jetstream";
import { registerCard } from "./card.js";
import { loadConfig, type Config } from "./config.js";
import { processItem, type ItemEnv } from "./item.js";
import { errorText, log } from "./log.js";
import { TaskLog } from "./tasklog.js";

// How long one pull request waits for work.
const fetchExpiresMs = 5000;

async function main(): Promise<void> {
  const cfg = loadConfig();
  const shutdown = new AbortController();
  // Every running item and the pull listen to it.
  setMaxListeners(cfg.concurrency + 8, shutdown.signal);
  for (const sig of ["SIGINT", "SIGTERM"] as const) {
    process.on(sig, () => {
      log(`${sig}: stopping; running items are nak'ed`);
      shutdown.abort();
    });
  }
  const nc = await connect({
    servers: cfg.natsUrl,
    user: cfg.user,
    pass: cfg.password,
    inboxPrefix: cfg.inboxPrefix,
    name: `a2abus-typescript-worker-${cfg.tenant}`,
    maxReconnectAttempts: -1,
  });
  void watchConnection(nc);
  const js = jetstream(nc);
  const { consumer, ackWaitMs, maxDeliver } = await bind(js, cfg);
  await register(js, cfg);

  const env: ItemEnv = {
    nc,
    log: new TaskLog(nc, js, cfg.stream, cfg.tenant),
    tenant: cfg.tenant,
    ackWaitMs,
    maxDeliver,
    shutdown: shutdown.signal,
  };
  log("worker started", {
    tenant: cfg.tenant,
    consumer: cfg.consumer,
    ack_wait_ms: ackWaitMs,
    max_deliver: maxDeliver,
    concurrency: cfg.concurrency,
  });
  await pull(consumer, env, cfg.concurrency, shutdown.signal);
  await nc.drain();
  log("worker stopped");
}

/** Binds the durable consumer the server provisioned (CONSUMER.INFO only). */
async function bind(
  js: JetStreamClient,
  cfg: Config,
): Promise<{ consumer: Consumer; ackWaitMs: number; maxDeliver: number }> {
  const consumer = await js.consumers.get(cfg.stream, cfg.consumer);
  const { config } = await consumer.info(true);
  const ackWaitMs = (config.ack_wait ?? 30_000_000_000) / 1_000_000;
  // max_deliver -1 (or unset) means unlimited: the worker never gives up.
  const maxDeliver = config.max_deliver !== undefined && config.max_deliver > 0 ? config.max_deliver : Infinity;
  return { consumer, ackWaitMs, maxDeliver };
}

async function register(js: JetStreamClient, cfg: Config): Promise<void> {
  try {
    await registerCard(js, cfg.tenant, cfg.agentName);
    log("agent card registered", { tenant: cfg.tenant, name: cfg.agentName });
  } catch (err) {
    log("agent card not registered", { err: errorText(err) });
  }
}

/**
 * Pulls work items, at most concurrency at a time, until signal is aborted;
 * then waits for the running items (which nak themselves).
 */
async function pull(consumer: Consumer, env: ItemEnv, concurrency: number, signal: AbortSignal): Promise<void> {
  const running = new Set<Promise<void>>();
  const stopped = new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve()));
  let ready = false;
  while (!signal.aborted) {
    const free = concurrency - running.size;
    if (free === 0) {
      await Promise.race([...running, stopped]);
      continue;
    }
    try {
      const batch = await consumer.fetch({ max_messages: free, expires: fetchExpiresMs });
      const stop = (): void => batch.stop();
      signal.addEventListener("abort", stop);
      if (!ready) {
        ready = true;
        process.stdout.write("ready\n");
      }
      try {
        for await (const msg of batch) {
          if (signal.aborted) {
            msg.nak();
            continue;
          }
          const p = processItem(env, msg).finally(() => running.delete(p));
          running.add(p);
        }
      } finally {
        signal.removeEventListener("abort", stop);
      }
    } catch (err) {
      if (!signal.aborted) {
        log("pull failed; retrying", { err: errorText(err) });
        await sleep(1000);
      }
    }
  }
  await Promise.all(running);
}

async function watchConnection(nc: NatsConnection): Promise<void> {
  for await (const s of nc.status()) {
    switch (s.type) {
      case "disconnect":
      case "reconnect":
        log(`nats ${s.type}`, { server: s.server });
        break;
      case "error":
        // Permission violations are reported here.
        log("nats error", { err: errorText(s.error) });
        break;
    }
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    log("worker failed", { err: errorText(err) });
    process.exit(1);
  },
);
