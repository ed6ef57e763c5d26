// Types of scripts/ascii-regexps.mjs, for the unit test that imports it (test/unit/ascii-regexps.spec.ts).
import type { Plugin } from 'esbuild';

export function escapeRegExpLiterals(source: string): string | null;
export const asciiRegExps: Plugin;
