// Validates an AsyncAPI document with the official parser
// (@asyncapi/parser), then checks every message example against its
// message's header and payload schemas (the parser's AsyncAPI 3 rules do
// not), so the examples and the schemas cannot disagree.
//
//   node validate.mjs [--addresses] [--events events.json] path/to/asyncapi.yaml
//
// Diagnostics go to stderr. The exit status is 1 if the parser reports any
// error-severity diagnostic or an example does not match its schemas, 2 on
// bad usage. Warnings are printed but do not fail.
//
// With --addresses, the address of every channel is printed on stdout as
// "address <address>", for checks that read the document without a YAML
// parser of their own. With --events, each event of the JSON file (an array
// of {"name", "type", "headers", "body"}, as the Go encoder wrote them) must
// match the document's schemas EventHeaders and the body schema of its
// type. TestAsyncAPIDocument (asyncapi_test.go) uses both.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createRequire } from 'node:module';
import { Parser, fromFile, DiagnosticSeverity } from '@asyncapi/parser';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';

const usage = 'usage: node validate.mjs [--addresses] [--events events.json] path/to/asyncapi.yaml';
let printAddresses = false;
let eventsFile;
const files = [];
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (a === '--addresses') printAddresses = true;
  else if (a === '--events' && i + 1 < process.argv.length) eventsFile = process.argv[++i];
  else if (a.startsWith('-')) {
    console.error(usage);
    process.exit(2);
  } else files.push(a);
}
if (files.length !== 1) {
  console.error(usage);
  process.exit(2);
}
const file = resolve(files[0]);

const require = createRequire(import.meta.url);
const parserVersion = require('@asyncapi/parser/package.json').version;

const severityName = (s) => DiagnosticSeverity[s] ?? String(s);

function where(d) {
  const path = d.path && d.path.length ? ` at ${d.path.join('/')}` : '';
  const line = d.range ? ` (line ${d.range.start.line + 1})` : '';
  return path + line;
}

let text;
try {
  text = readFileSync(file, 'utf8');
} catch (err) {
  console.error(`${file}: ${err.message}`);
  process.exit(1);
}
if (text.trim() === '') {
  console.error(`${file}: empty document`);
  process.exit(1);
}

const parser = new Parser();
const { document, diagnostics } = await fromFile(parser, file).parse();

let errors = 0;
let warnings = 0;
for (const d of diagnostics) {
  if (d.severity === DiagnosticSeverity.Error) errors++;
  else if (d.severity === DiagnosticSeverity.Warning) warnings++;
  // Information and hints are printed too: they are cheap to read and
  // often worth fixing.
  console.error(`${severityName(d.severity).toLowerCase()}: ${d.code}: ${d.message}${where(d)}`);
}
if (errors > 0 || !document) {
  console.error(`${file}: ${errors} error(s), ${warnings} warning(s): not a valid AsyncAPI document (@asyncapi/parser ${parserVersion})`);
  process.exit(1);
}

// Examples against schemas. The parser has resolved every $ref, so the
// schemas are self-contained; x-parser-* annotations are ignored.
const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: true });
addFormats(ajv);
const compiled = new Map();
function validator(schema) {
  let v = compiled.get(schema);
  if (!v) {
    v = ajv.compile(schema);
    compiled.set(schema, v);
  }
  return v;
}

let examples = 0;
let bad = 0;
for (const message of document.allMessages()) {
  const name = message.id() ?? message.name() ?? '(anonymous message)';
  for (const [i, ex] of message.examples().all().entries()) {
    const label = `message ${name}, example ${ex.name() ?? i}`;
    examples++;
    for (const [what, has, value, schema] of [
      ['headers', ex.hasHeaders(), ex.headers(), message.hasHeaders() ? message.headers().json() : undefined],
      ['payload', ex.hasPayload(), ex.payload(), message.hasPayload() ? message.payload().json() : undefined],
    ]) {
      if (!has) continue;
      if (schema === undefined) {
        console.error(`error: ${label}: has ${what} but the message defines no ${what} schema`);
        bad++;
        continue;
      }
      const validate = validator(schema);
      if (!validate(value)) {
        bad++;
        for (const e of validate.errors) {
          console.error(`error: ${label}: ${what}${e.instancePath || ''} ${e.message}${e.params ? ' ' + JSON.stringify(e.params) : ''}`);
        }
      }
    }
  }
}
if (bad > 0) {
  console.error(`${file}: ${bad} example part(s) do not match their schemas`);
  process.exit(1);
}

// Events made by the reference encoder against the schemas.
let checkedEvents = 0;
if (eventsFile) {
  const bodySchemaOf = {
    'a2a.task.created.v1': 'CreatedBody',
    'a2a.task.input.v1': 'InputBody',
    'a2a.task.status.v1': 'TaskStatusUpdateEvent',
    'a2a.task.artifact.v1': 'TaskArtifactUpdateEvent',
  };
  const schemas = document.components().schemas();
  const schemaJSON = (id) => {
    const s = schemas.get(id);
    if (!s) {
      console.error(`error: the document has no schema components/schemas/${id}`);
      process.exit(1);
    }
    return s.json();
  };
  const evs = JSON.parse(readFileSync(eventsFile, 'utf8'));
  for (const ev of evs) {
    checkedEvents++;
    const bodyID = bodySchemaOf[ev.type];
    if (!bodyID) {
      console.error(`error: event ${ev.name}: type ${ev.type} has no body schema`);
      bad++;
      continue;
    }
    for (const [what, id, value] of [
      ['headers', 'EventHeaders', ev.headers],
      ['body', bodyID, ev.body],
    ]) {
      const validate = validator(schemaJSON(id));
      if (!validate(value)) {
        bad++;
        for (const e of validate.errors) {
          console.error(`error: event ${ev.name} (${ev.type}): ${what}${e.instancePath || ''} ${e.message} (schema ${id})`);
        }
      }
    }
  }
  if (bad > 0) {
    console.error(`${file}: ${bad} part(s) of the events of ${eventsFile} do not match the schemas`);
    process.exit(1);
  }
}

const channels = document.allChannels().all();
if (printAddresses) {
  for (const ch of channels) {
    if (ch.address() != null) console.log(`address ${ch.address()}`);
  }
}
console.log(
  `${file}: valid AsyncAPI ${document.version()} (@asyncapi/parser ${parserVersion}): ` +
    `${channels.length} channels, ${document.allOperations().all().length} operations, ` +
    `${document.allMessages().all().length} messages, ${examples} examples and ${checkedEvents} encoded events checked, ` +
    `${warnings} warning(s)`,
);
