// One-line logs on stderr: time, message, key=value fields. stdout is
// kept for the "ready" line a harness waits for.

export type Fields = Record<string, string | number | boolean | undefined>;

function format(v: string | number | boolean): string {
  const s = String(v);
  return /^[^\s"=]+$/.test(s) ? s : JSON.stringify(s);
}

export function log(msg: string, fields: Fields = {}): void {
  let line = `${new Date().toISOString()} ${msg}`;
  for (const [k, v] of Object.entries(fields)) {
    if (v !== undefined) {
      line += ` ${k}=${format(v)}`;
    }
  }
  process.stderr.write(line + "\n");
}

/** The message of an error, for logs and FAILED statuses. */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
