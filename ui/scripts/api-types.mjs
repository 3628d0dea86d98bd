// The UI's API types, generated from keiri-api's JSON Schema (`ui/src/api/schema.json`, which a
// Rust test keeps current with crates/keiri-api/src/surface.rs) by json-schema-to-typescript,
// the maintained JSON Schema → TypeScript compiler. `make generated` rewrites both files; the
// unit test `src/api/generated.test.ts` fails while `src/api/generated.ts` is stale.
//
//   node scripts/api-types.mjs          rewrite src/api/generated.ts
import { readFile, writeFile, rename } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { compile } from 'json-schema-to-typescript';

const API_DIR = fileURLToPath(new URL('../src/api/', import.meta.url));
export const SCHEMA_PATH = `${API_DIR}schema.json`;
export const TYPES_PATH = `${API_DIR}generated.ts`;

const BANNER =
  '// Generated from ui/src/api/schema.json (crates/keiri-api/src/surface.rs) — do not edit;\n' +
  '// `make generated` rewrites it.';

// Keywords that say what a value may be. A schema with none of them (serde_json's `Value`, with
// only a description) accepts any JSON, but json-schema-to-typescript would type it as an
// object; it is `unknown`.
const CONSTRAINTS = [
  'type', '$ref', 'enum', 'const', 'anyOf', 'oneOf', 'allOf', 'not',
  'properties', 'additionalProperties', 'items', 'required',
];

/** Marks every schema that accepts any JSON value as `unknown` (in place). */
function anyIsUnknown(schema) {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return;
  if (!CONSTRAINTS.some((key) => key in schema)) schema.tsType = 'unknown';
  for (const key of ['properties', 'definitions', 'patternProperties']) {
    for (const sub of Object.values(schema[key] ?? {})) anyIsUnknown(sub);
  }
  for (const key of ['anyOf', 'oneOf', 'allOf']) {
    for (const sub of schema[key] ?? []) anyIsUnknown(sub);
  }
  for (const key of ['items', 'additionalProperties', 'not']) {
    if (Array.isArray(schema[key])) schema[key].forEach(anyIsUnknown);
    else anyIsUnknown(schema[key]);
  }
}

/** The TypeScript text for the schema at `SCHEMA_PATH`. */
export async function apiTypes() {
  const schema = JSON.parse(await readFile(SCHEMA_PATH, 'utf8'));
  for (const definition of Object.values(schema.definitions ?? {})) anyIsUnknown(definition);
  for (const fn of Object.values(schema.properties ?? {})) anyIsUnknown(fn);
  return compile(schema, 'ApiFunctions', {
    bannerComment: BANNER,
    // Every definition becomes an exported type, used by a function or not.
    unreachableDefinitions: true,
    // The schema is self-contained: never resolve a `$ref` from the disk or the network.
    $refOptions: { resolve: { external: false } },
    additionalProperties: false,
    strictIndexSignatures: true,
    format: true,
    style: { singleQuote: true, printWidth: 100 },
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const text = await apiTypes();
  // Whole or not at all: a half-written file would break every import of it.
  await writeFile(`${TYPES_PATH}.tmp`, text);
  await rename(`${TYPES_PATH}.tmp`, TYPES_PATH);
  console.log(`wrote ${TYPES_PATH}`);
}
