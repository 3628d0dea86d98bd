// Usage: node check.mjs DIR
// For every DIR/<case>.toon, decodes it with the reference TOON implementation and compares
// the result with JSON.parse(DIR/<case>.json). Prints "N passed, M failed"; exits 1 on any
// failure or when there was nothing to check.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { decode } from '@toon-format/toon';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node check.mjs DIR');
  process.exit(2);
}
let passed = 0;
let failed = 0;
for (const name of readdirSync(dir).filter((n) => n.endsWith('.toon')).sort()) {
  const toon = readFileSync(join(dir, name), 'utf8');
  const expected = JSON.parse(readFileSync(join(dir, name.replace(/\.toon$/, '.json')), 'utf8'));
  let decoded;
  try {
    decoded = decode(toon);
  } catch (err) {
    failed += 1;
    console.error(`FAIL ${name}: decode threw: ${err.message}`);
    continue;
  }
  if (isDeepStrictEqual(decoded, expected)) {
    passed += 1;
  } else {
    failed += 1;
    console.error(`FAIL ${name}: decoded value differs\n  expected ${JSON.stringify(expected)}\n  decoded  ${JSON.stringify(decoded)}`);
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
