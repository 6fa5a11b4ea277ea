// Registers the agent card: a JetStream publish of the card JSON to the
// tenant's key of the A2A_AGENTS KV bucket, which the edge serves at
// /<tenant>/.well-known/agent-card.json.

import type { JetStreamClient } from "@nats-io/jetstream";
import { skillCards } from "./skills.js";

export const agentsBucket = "A2A_AGENTS";
const version = "0.1.0";

export function agentCard(name: string): Record<string, unknown> {
  return {
    name,
    description:
      "The a2abus demo skills (echo, ask, stream, slow) served by an external worker written in TypeScript.",
    version,
    skills: skillCards,
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
  };
}

export async function registerCard(js: JetStreamClient, tenant: string, name: string): Promise<number> {
  const ack = await js.publish(`$KV.${agentsBucket}.${tenant}`, JSON.stringify(agentCard(name)));
  return ack.seq;
}
