// @vitest-environment node
// ui/src/api/generated.ts is generated from ui/src/api/schema.json (which a Rust test keeps
// current with keiri-api). This test fails while the checked-in TypeScript is stale, so a
// request or response type can only change in Rust.
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module script without type declarations.
import { apiTypes, TYPES_PATH } from '../../scripts/api-types.mjs';

describe('generated API types', () => {
  it('match the schema (run `make generated` after changing a request or response type)', async () => {
    const want: string = await apiTypes();
    const have = await readFile(TYPES_PATH, 'utf8');
    expect(have === want, 'ui/src/api/generated.ts is stale: run `make generated`').toBe(true);
  }, 30_000);
});
