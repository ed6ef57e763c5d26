import { importing, TEST_PASSES, type EvalCase } from './case.js';
import { MORE_CASES } from './cases-more.js';

const MATH = 'export function add(a, b) {\n  return a - b;\n}\n\nexport function double(n) {\n  return add(n, n);\n}\n';
const MATH_TEST = "import assert from 'node:assert/strict';\nimport { add, double } from './math.mjs';\n\nassert.equal(add(2, 3), 5);\nassert.equal(double(4), 8);";
const CART = 'export function total(items) {\n  let sum = 0;\n  for (let i = 0; i <= items.length; i++) {\n    sum += items[i].price;\n  }\n  return sum;\n}\n';
const TEXT = 'export function capitalize(word) {\n  return word.charAt(1).toUpperCase() + word.slice(1);\n}\n';
const TEXT_TEST = "import assert from 'node:assert/strict';\nimport { capitalize } from './text.mjs';\n\nassert.equal(capitalize('tokyo'), 'Tokyo');";
const SHAPES =
  'export function area(w, h) {\n  if (w < 0 || h < 0) throw new Error("negative size");\n  return w * h;\n}\n\nexport function perimeter(w, h) {\n  if (w < 0 || h < 0) throw new Error("negative size");\n  return 2 * (w + h);\n}\n';
const SHAPES_REFACTORED =
  'function checkSize(w, h) {\n  if (w < 0 || h < 0) throw new Error("negative size");\n}\n\nexport function area(w, h) {\n  checkSize(w, h);\n  return w * h;\n}\n\nexport function perimeter(w, h) {\n  checkSize(w, h);\n  return 2 * (w + h);\n}\n';
const SHAPES_TEST =
  "import assert from 'node:assert/strict';\nimport { area, perimeter } from './shapes.mjs';\n\nassert.equal(area(2, 3), 6);\nassert.equal(perimeter(2, 3), 10);\nassert.throws(() => area(-1, 2));\nassert.throws(() => perimeter(1, -2));";
const SLUGIFY = "export function slugify(text) {\n  return text.toLowerCase().trim().replace(/\\s+/g, '-').replace(/[^a-z0-9-]/g, '');\n}\n";
const SLUGIFY_CHECK = `${importing('{ slugify }', 'slugify.mjs')}assert.equal(slugify('Hello World'), 'hello-world');\nassert.equal(slugify('  Déjà Vu 2!  '), 'dj-vu-2');\nassert.equal(slugify('a  b'), 'a-b');\n`;

/** The first seventeen cases of the suite; the rest are in cases-more.ts. */
const FIRST_CASES: EvalCase[] = [
  {
    id: 'no-tool',
    kind: 'a request that needs no tool',
    files: {},
    request: 'In one sentence: what does the HTTP status code 404 mean? No files are needed.',
    checks: [{ answer: /not found/i }],
    reference: { steps: [], answer: '404 Not Found: the server has no resource at the requested URL.' },
    needsTools: false,
  },
  {
    id: 'fix-failing-test',
    kind: 'fix a failing test',
    files: { 'math.mjs': MATH, 'test.mjs': MATH_TEST },
    request: 'The test in test.mjs fails. Fix the bug in math.mjs (not the test) so that `node test.mjs` passes.',
    checks: TEST_PASSES,
    reference: {
      steps: [
        { tool: 'read_file', args: { path: 'math.mjs' } },
        { tool: 'edit_file', args: { path: 'math.mjs', old_text: 'return a - b;', new_text: 'return a + b;' } },
        { tool: 'run_command', args: { command: 'node test.mjs' } },
      ],
      answer: 'add() in math.mjs subtracted instead of adding; it now returns a + b and `node test.mjs` passes.',
    },
    needsTools: true,
  },
  {
    id: 'fix-failing-test-2',
    kind: 'fix a failing test',
    files: { 'text.mjs': TEXT, 'test.mjs': TEXT_TEST },
    request: 'Running `node test.mjs` fails. Find out why and fix text.mjs.',
    checks: TEST_PASSES,
    reference: {
      steps: [
        { tool: 'run_command', args: { command: 'node test.mjs' } },
        { tool: 'read_file', args: { path: 'text.mjs' } },
        { tool: 'edit_file', args: { path: 'text.mjs', old_text: 'word.charAt(1)', new_text: 'word.charAt(0)' } },
      ],
      answer: 'capitalize() took the second character (charAt(1)); it now upper-cases the first one.',
    },
    needsTools: true,
  },
  {
    id: 'explain-bug',
    kind: 'find and explain a bug',
    files: { 'cart.mjs': CART },
    request: 'total() in cart.mjs throws for every cart. Find the bug and explain it in two sentences; do not change any file.',
    checks: [{ answer: /<=|off[- ]by[- ]one|one (element|item) too (many|far)/i }, { unchanged: 'cart.mjs' }],
    reference: {
      steps: [{ tool: 'read_file', args: { path: 'cart.mjs' } }],
      answer:
        'The loop runs while i <= items.length, an off-by-one: the last round reads items[items.length], which is undefined, so `.price` throws. It should be i < items.length.',
    },
    needsTools: true,
  },
  {
    id: 'refactor-keep-tests',
    kind: 'refactor without breaking tests',
    files: { 'shapes.mjs': SHAPES, 'test.mjs': SHAPES_TEST },
    request: 'area() and perimeter() in shapes.mjs repeat the same size check. Move it into one helper function without breaking `node test.mjs`.',
    checks: [...TEST_PASSES, { file: 'shapes.mjs', matches: /^(?![\s\S]*negative size[\s\S]*negative size)[\s\S]*$/ }],
    reference: {
      steps: [
        { tool: 'read_file', args: { path: 'shapes.mjs' } },
        { tool: 'write_file', args: { path: 'shapes.mjs', content: SHAPES_REFACTORED } },
        { tool: 'run_command', args: { command: 'node test.mjs' } },
      ],
      answer: 'The size check is now one helper, checkSize(), called by area() and perimeter(); `node test.mjs` still passes.',
    },
    needsTools: true,
  },
  {
    id: 'write-to-spec',
    kind: 'write a file to a specification',
    files: { 'README.md': '# utils\n' },
    request:
      'Create slugify.mjs exporting a function slugify(text): lower-case the text, trim it, replace each run of white space with one hyphen, then drop every character that is not a-z, 0-9 or a hyphen.',
    checks: [{ script: SLUGIFY_CHECK }],
    reference: { steps: [{ tool: 'write_file', args: { path: 'slugify.mjs', content: SLUGIFY } }], answer: 'slugify.mjs now exports slugify(text) as specified.' },
    needsTools: true,
  },
  {
    id: 'answer-from-files',
    kind: 'answer from several files',
    files: {
      'config/service.json': '{\n  "name": "billing-api",\n  "port": 8443\n}\n',
      'docs/deploy.md': '# Deploy\n\nThe billing service runs behind the proxy; its health check is /healthz.\n',
      'docs/owners.md': '# Owners\n\nbilling-api: team Kestrel\n',
    },
    request: 'Which port does the billing service listen on, what is its health check path, and which team owns it? Look in the files.',
    checks: [{ answer: /8443/ }, { answer: /\/healthz/ }, { answer: /kestrel/i }],
    reference: {
      steps: [
        { tool: 'read_file', args: { path: 'config/service.json' } },
        { tool: 'read_file', args: { path: 'docs/deploy.md' } },
        { tool: 'read_file', args: { path: 'docs/owners.md' } },
      ],
      answer: 'billing-api listens on port 8443, its health check is /healthz, and team Kestrel owns it.',
    },
    needsTools: true,
  },
  {
    id: 'find-definition',
    kind: 'answer from several files',
    files: {
      'src/index.mjs': "import { parseDate } from './util/dates.mjs';\nexport const start = parseDate('2026-01-01');\n",
      'src/util/dates.mjs': 'export function parseDate(text) {\n  return new Date(text);\n}\n',
      'src/util/numbers.mjs': 'export const parseNumber = (text) => Number(text);\n',
    },
    request: 'Which file defines the function parseDate? Answer with its path.',
    checks: [{ answer: /src\/util\/dates\.mjs/ }],
    reference: { steps: [{ tool: 'grep', args: { pattern: 'function parseDate', path: 'src' } }], answer: 'parseDate is defined in src/util/dates.mjs.' },
    needsTools: true,
  },
  {
    id: 'shell-output',
    kind: 'use a shell command and read its output',
    files: { 'logs/a.log': 'start\nok\nok\n', 'logs/b.log': 'start\nerror: disk\nok\nok\nstop\n', 'logs/c.log': 'start\nerror: net\n' },
    request: 'Use a shell command to count how many lines in the logs/*.log files contain "error", and tell me the number.',
    checks: [{ answer: /\b2\b/ }],
    reference: { steps: [{ tool: 'run_command', args: { command: 'cat logs/*.log | grep -c error' } }], answer: '2 lines contain "error".' },
    needsTools: true,
  },
  {
    id: 'split-request',
    kind: 'a split request',
    files: { 'hello.mjs': "export const greeting = 'Hi';\n", 'src/a.mjs': '', 'src/b.mjs': '', 'src/c.mjs': '' },
    request:
      "Three things: create notes/todo.md containing the single line '- buy milk'; change the greeting in hello.mjs from 'Hi' to 'Hello'; and tell me how many files are in src/.",
    checks: [{ file: 'notes/todo.md', equals: '- buy milk' }, { file: 'hello.mjs', matches: /greeting = 'Hello'/ }, { answer: /\b3\b|three/i }],
    reference: {
      steps: [
        { tool: 'write_file', args: { path: 'notes/todo.md', content: '- buy milk\n' } },
        { tool: 'edit_file', args: { path: 'hello.mjs', old_text: "'Hi'", new_text: "'Hello'" } },
        { tool: 'list_dir', args: { path: 'src' } },
      ],
      answer: 'Done: notes/todo.md is written, hello.mjs greets with Hello, and src/ holds 3 files.',
    },
    needsTools: true,
  },
  {
    id: 'ask-when-unclear',
    kind: 'a question the agent should ask',
    files: { 'app.mjs': 'const a = 1;\nconst b = 2;\nexport const sum = a + b;\n' },
    request: 'Rename the variable.',
    checks: [{ answer: /\?|？/ }, { unchanged: 'app.mjs' }],
    reference: { steps: [], answer: 'Which variable should I rename (a or b in app.mjs), and to what name?' },
    needsTools: false,
  },
  {
    id: 'japanese-answer',
    kind: 'a request in Japanese',
    files: { 'README.md': '# プロジェクト概要\n\nプロジェクト名: さくら\n担当: 山田\n' },
    request: 'README.md に書かれているプロジェクト名と担当者を教えてください。',
    checks: [{ answer: /さくら/ }, { answer: /山田/ }],
    reference: { steps: [{ tool: 'read_file', args: { path: 'README.md' } }], answer: 'プロジェクト名は「さくら」、担当者は山田さんです。' },
    needsTools: true,
  },
  {
    id: 'japanese-write',
    kind: 'a request in Japanese',
    files: {},
    request: 'greeting.txt というファイルを作成し、内容を「こんにちは」の一行だけにしてください。',
    checks: [{ file: 'greeting.txt', equals: 'こんにちは' }],
    reference: { steps: [{ tool: 'write_file', args: { path: 'greeting.txt', content: 'こんにちは\n' } }], answer: 'greeting.txt を作成しました。' },
    needsTools: true,
  },
  {
    id: 'edit-json-setting',
    kind: 'write a file to a specification',
    files: { 'config.json': '{\n  "name": "shop",\n  "port": 8080,\n  "debug": false\n}\n' },
    request: 'In config.json, set the port to 9090 and turn debug on. Keep everything else as it is.',
    checks: [
      {
        script:
          "import assert from 'node:assert/strict';\nimport { readFileSync } from 'node:fs';\nassert.deepEqual(JSON.parse(readFileSync('config.json', 'utf8')), { name: 'shop', port: 9090, debug: true });\n",
      },
    ],
    reference: {
      steps: [
        { tool: 'read_file', args: { path: 'config.json' } },
        { tool: 'write_file', args: { path: 'config.json', content: '{\n  "name": "shop",\n  "port": 9090,\n  "debug": true\n}\n' } },
      ],
      answer: 'config.json now has port 9090 and debug true; the name is unchanged.',
    },
    needsTools: true,
  },
  {
    id: 'count-todos',
    kind: 'answer from several files',
    files: {
      'src/a.mjs': '// TODO: cache this\nexport const a = 1;\n',
      'src/b.mjs': 'export const b = 2; // TODO: validate\n// TODO: remove after March\n',
      'src/c.mjs': 'export const c = 3;\n',
      'notes.md': 'TODO outside src does not count\n',
    },
    request: 'How many TODO comments are there in the files under src/? Give the number and the files they are in.',
    checks: [{ answer: /\b3\b|three/i }, { answer: /a\.mjs/ }, { answer: /b\.mjs/ }],
    reference: { steps: [{ tool: 'grep', args: { pattern: 'TODO', path: 'src' } }], answer: 'There are 3 TODO comments: one in src/a.mjs and two in src/b.mjs.' },
    needsTools: true,
  },
  {
    id: 'rename-across-files',
    kind: 'refactor without breaking tests',
    files: {
      'users.mjs': "export function getUsr(id) {\n  return { id, name: 'user' + id };\n}\n",
      'main.mjs': "import { getUsr } from './users.mjs';\nexport const first = getUsr(1);\n",
      'test.mjs':
        "import assert from 'node:assert/strict';\nimport { first } from './main.mjs';\nimport * as users from './users.mjs';\n\nassert.equal(first.name, 'user1');\nassert.equal(typeof users.getUser, 'function');\n",
    },
    request: 'Rename the function getUsr to getUser everywhere it is used, so that `node test.mjs` passes.',
    checks: [...TEST_PASSES, { command: '! grep -rq getUsr --include=*.mjs .' }],
    reference: {
      steps: [
        { tool: 'grep', args: { pattern: 'getUsr', path: '.' } },
        { tool: 'edit_file', args: { path: 'users.mjs', old_text: 'function getUsr(', new_text: 'function getUser(' } },
        { tool: 'write_file', args: { path: 'main.mjs', content: "import { getUser } from './users.mjs';\nexport const first = getUser(1);\n" } },
        { tool: 'run_command', args: { command: 'node test.mjs' } },
      ],
      answer: 'getUsr is now getUser in users.mjs and main.mjs; `node test.mjs` passes.',
    },
    needsTools: true,
  },
  {
    id: 'japanese-fix',
    kind: 'a request in Japanese',
    files: {
      'price.mjs': 'export function withTax(price) {\n  return Math.round(price * 0.1);\n}\n',
      'test.mjs': "import assert from 'node:assert/strict';\nimport { withTax } from './price.mjs';\n\nassert.equal(withTax(1000), 1100);\n",
    },
    request: '`node test.mjs` が失敗します。price.mjs の withTax（税込み価格、税率10%）を直してください。テストは変更しないでください。',
    checks: TEST_PASSES,
    reference: {
      steps: [
        { tool: 'read_file', args: { path: 'price.mjs' } },
        { tool: 'edit_file', args: { path: 'price.mjs', old_text: 'price * 0.1', new_text: 'price * 1.1' } },
        { tool: 'run_command', args: { command: 'node test.mjs' } },
      ],
      answer: 'withTax は税額だけを返していました。price * 1.1 に直し、テストが通ることを確認しました。',
    },
    needsTools: true,
  },
];

/**
 * The fixed suite (issue 41): small, realistic cases, each with its fixture, a verifier and a reference
 * solution. Ids are stable: reports of different days compare case by case.
 */
export const CASES: EvalCase[] = [...FIRST_CASES, ...MORE_CASES];

/** The cases whose id contains one of `filters` (comma-separated on the command line); all when none. */
export function selectCases(filters: string[]): EvalCase[] {
  if (filters.length === 0) return CASES;
  return CASES.filter((item) => filters.some((filter) => item.id.includes(filter)));
}
