// ESLint with typescript-eslint's type-checked rules; formatting is Prettier's (eslint-config-prettier turns off the
// rules it owns). The architecture rules (module boundaries, one reader of process.env...) stay in test/unit specs.
import { includeIgnoreFile } from '@eslint/compat';
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import { fileURLToPath } from 'node:url';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // What git ignores (build output, data/, a profile's copies under .prof/, which ran ESLint out of memory), read from
  // .gitignore itself so that the two lists cannot drift apart.
  includeIgnoreFile(fileURLToPath(new URL('.gitignore', import.meta.url))),
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // Files with decorators are skipped by the rule itself (emitDecoratorMetadata needs the value import for DI).
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // Disabled: async functions without await are how this code implements async interfaces (SDK transports,
      // stores, Nest hooks) and keeps a thrown error a rejection; the rule would have them rewritten for nothing.
      '@typescript-eslint/require-await': 'off',
      // Disabled: the validators reject control characters by matching them, on purpose (command patterns, names).
      'no-control-regex': 'off',
      // Disabled: expected output with aligned columns (`ok    name`) reads best as written, not as ` {4}`.
      'no-regex-spaces': 'off',
      // A test's stub may refer to a variable that is assigned after it, once: that is not a missed const.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
  {
    // Tests and benchmarks read the service's wire JSON (parsed, so `any`) and assert on it: the assertion is the
    // check. The no-unsafe-* rules guard the boundaries in src/, where a value from outside must be validated.
    files: ['test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    // The console's classic scripts share one global scope: each names what it takes from the other
    // (/* global */) and what it gives (/* exported */), which only ESLint's own no-unused-vars reads.
    files: ['public/**/*.js'],
    languageOptions: { sourceType: 'script', globals: { ...globals.browser } },
    rules: {
      'no-redeclare': ['error', { builtinGlobals: false }],
      '@typescript-eslint/no-unused-vars': 'off',
      'no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  prettier,
);
