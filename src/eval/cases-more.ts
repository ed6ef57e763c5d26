import { createHash } from 'node:crypto';
import { importing, TEST_PASSES, type EvalCase } from './case.js';
import { mcpToolName } from './eval-tools.js';

const LEAP = 'export function isLeapYear(year) {\n  return year % 4 === 0;\n}\n';
const LEAP_TEST =
  "import assert from 'node:assert/strict';\nimport { isLeapYear } from './dates.mjs';\n\nassert.equal(isLeapYear(2024), true);\nassert.equal(isLeapYear(2023), false);\nassert.equal(isLeapYear(1900), false);\nassert.equal(isLeapYear(2000), true);\n";
const TAX = 'export function addTax(price) {\n  return Math.round(price * 1.08);\n}\n\nexport function taxOf(price) {\n  return Math.round(price * 0.08);\n}\n';
const TAX_REFACTORED =
  'export const TAX_RATE = 0.08;\n\nexport function addTax(price) {\n  return Math.round(price * (1 + TAX_RATE));\n}\n\nexport function taxOf(price) {\n  return Math.round(price * TAX_RATE);\n}\n';
const TAX_TEST = "import assert from 'node:assert/strict';\nimport { addTax, taxOf } from './tax.mjs';\n\nassert.equal(addTax(1000), 1080);\nassert.equal(taxOf(250), 20);\n";
const STACK =
  'export class Stack {\n  #items = [];\n\n  push(item) {\n    this.#items.push(item);\n  }\n\n  pop() {\n    return this.#items.pop();\n  }\n\n  peek() {\n    return this.#items.at(-1);\n  }\n\n  get size() {\n    return this.#items.length;\n  }\n}\n';
const NUMBERS = 'export function sum(values) {\n  return values.reduce((total, value) => total + value, 0);\n}\n';
const NUMBERS_WITH_CLAMP = `${NUMBERS}\nexport function clamp(value, min, max) {\n  return Math.min(Math.max(value, min), max);\n}\n`;
const FINGERPRINT = '#!/bin/sh\n# A short fingerprint of the data file.\nsha256sum data.txt | cut -c1-12\n';
const FINGERPRINT_DATA = 'eval fixture\n';
/** What `sh fingerprint.sh` prints: no model can know it without running it. */
const FINGERPRINT_OUTPUT = createHash('sha256').update(FINGERPRINT_DATA).digest('hex').slice(0, 12);
const CSV = `id,city\n${Array.from({ length: 57 }, (_, index) => `${index + 1},city-${index % 7}`).join('\n')}\n`;
const REPORTS = { 'reports/2024-q1.csv': 'q,total\n1,100\n', 'reports/2024-q2.csv': 'q,total\n2,120\n', 'reports/draft.csv': 'q,total\n' };

/**
 * The cases added to the first seventeen (cases.ts) to reach issue 41's thirty: another of each kind of work, and
 * the two that need the eval's own MCP servers (eval-tools.ts): a tool of a configured server, and an approval the
 * eval denies.
 */
export const MORE_CASES: EvalCase[] = [
  {
    id: 'no-tool-units',
    kind: 'a request that needs no tool',
    files: {},
    request: 'How many metres are 3.5 kilometres? Just the number is fine; no files are needed.',
    checks: [{ answer: /\b3[,\u202f ]?500\b/ }],
    reference: { steps: [], answer: '3500 metres.' },
    needsTools: false,
  },
  {
    id: 'fix-failing-test-leap',
    kind: 'fix a failing test',
    files: { 'dates.mjs': LEAP, 'test.mjs': LEAP_TEST },
    request: '`node test.mjs` fails. Fix isLeapYear in dates.mjs (the Gregorian rule), not the test.',
    checks: TEST_PASSES,
    reference: {
      steps: [
        { tool: 'run_command', args: { command: 'node test.mjs' } },
        { tool: 'edit_file', args: { path: 'dates.mjs', old_text: 'return year % 4 === 0;', new_text: 'return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;' } },
        { tool: 'run_command', args: { command: 'node test.mjs' } },
      ],
      answer: 'isLeapYear() ignored the century rule; a year divisible by 100 is now a leap year only when divisible by 400, and the test passes.',
    },
    needsTools: true,
  },
  {
    id: 'explain-bug-assignment',
    kind: 'find and explain a bug',
    files: { 'users.mjs': 'export function activeUsers(users) {\n  return users.filter((user) => (user.active = true));\n}\n' },
    request: 'activeUsers() in users.mjs returns inactive users too. Find the bug and explain it briefly; do not change any file.',
    checks: [{ answer: /assign|===|comparison|compare/i }, { unchanged: 'users.mjs' }],
    reference: {
      steps: [{ tool: 'read_file', args: { path: 'users.mjs' } }],
      answer:
        'The filter uses `user.active = true`, an assignment instead of a comparison: it sets every user active and always returns true. It should be `user.active === true`.',
    },
    needsTools: true,
  },
  {
    id: 'refactor-constant',
    kind: 'refactor without breaking tests',
    files: { 'tax.mjs': TAX, 'test.mjs': TAX_TEST },
    request: 'tax.mjs repeats the tax rate 8 % as a bare number. Introduce one exported constant TAX_RATE = 0.08 and use it in both functions, without breaking `node test.mjs`.',
    checks: [
      ...TEST_PASSES,
      {
        script: `${importing('tax', 'tax.mjs')}import { readFileSync } from 'node:fs';\nassert.equal(tax.TAX_RATE, 0.08);\nassert.equal(readFileSync('tax.mjs', 'utf8').match(/\\d\\.08/g)?.length, 1);\n`,
      },
    ],
    reference: {
      steps: [
        { tool: 'read_file', args: { path: 'tax.mjs' } },
        { tool: 'write_file', args: { path: 'tax.mjs', content: TAX_REFACTORED } },
        { tool: 'run_command', args: { command: 'node test.mjs' } },
      ],
      answer: 'tax.mjs now exports TAX_RATE = 0.08, used by addTax() and taxOf(); `node test.mjs` passes.',
    },
    needsTools: true,
  },
  {
    id: 'write-class-to-spec',
    kind: 'write a file to a specification',
    files: {},
    request:
      'Create stack.mjs exporting a class Stack with push(item), pop() (removes and returns the last pushed item, undefined when empty), peek() (the last item, not removed) and a size getter.',
    checks: [
      {
        script: `${importing('module', 'stack.mjs')}const stack = new module.Stack();\nassert.equal(stack.size, 0);\nassert.equal(stack.pop(), undefined);\nstack.push(1);\nstack.push(2);\nassert.equal(stack.peek(), 2);\nassert.equal(stack.size, 2);\nassert.equal(stack.pop(), 2);\nassert.equal(stack.size, 1);\n`,
      },
    ],
    reference: { steps: [{ tool: 'write_file', args: { path: 'stack.mjs', content: STACK } }], answer: 'stack.mjs exports Stack with push, pop, peek and size.' },
    needsTools: true,
  },
  {
    id: 'add-function-to-spec',
    kind: 'write a file to a specification',
    files: { 'numbers.mjs': NUMBERS },
    request: 'Add an exported function clamp(value, min, max) to numbers.mjs, keeping sum() as it is: min when value is below min, max when it is above max, otherwise value.',
    checks: [
      {
        script: `${importing('numbers', 'numbers.mjs')}assert.equal(numbers.clamp(5, 1, 10), 5);\nassert.equal(numbers.clamp(-3, 1, 10), 1);\nassert.equal(numbers.clamp(42, 1, 10), 10);\nassert.equal(numbers.sum([1, 2, 3]), 6);\n`,
      },
    ],
    reference: {
      steps: [
        { tool: 'read_file', args: { path: 'numbers.mjs' } },
        { tool: 'write_file', args: { path: 'numbers.mjs', content: NUMBERS_WITH_CLAMP } },
      ],
      answer: 'numbers.mjs now also exports clamp(value, min, max); sum() is unchanged.',
    },
    needsTools: true,
  },
  {
    id: 'answer-from-lockfile',
    kind: 'answer from several files',
    files: {
      'package.json': '{\n  "name": "shop-web",\n  "dependencies": { "dayjs": "^1.11.0", "left-pad": "^1.3.0" }\n}\n',
      'package-lock.json': '{\n  "packages": {\n    "node_modules/dayjs": { "version": "1.11.13" },\n    "node_modules/left-pad": { "version": "1.3.0" }\n  }\n}\n',
      'src/format.mjs': "import dayjs from 'dayjs';\nexport const today = () => dayjs().format('YYYY-MM-DD');\n",
      'src/pad.mjs': "import leftPad from 'left-pad';\nexport const pad = (text) => leftPad(text, 8);\n",
    },
    request: 'Which exact version of dayjs is installed according to the lock file, and which file under src/ imports it?',
    checks: [{ answer: /1\.11\.13/ }, { answer: /format\.mjs/ }],
    reference: {
      steps: [
        { tool: 'read_file', args: { path: 'package-lock.json' } },
        { tool: 'grep', args: { pattern: 'dayjs', path: 'src' } },
      ],
      answer: 'dayjs 1.11.13 is installed, and src/format.mjs imports it.',
    },
    needsTools: true,
  },
  {
    id: 'shell-output-run',
    kind: 'use a shell command and read its output',
    files: { 'fingerprint.sh': FINGERPRINT, 'data.txt': FINGERPRINT_DATA },
    request: 'Run `sh fingerprint.sh` and tell me exactly what it prints.',
    checks: [{ answer: new RegExp(FINGERPRINT_OUTPUT) }],
    reference: { steps: [{ tool: 'run_command', args: { command: 'sh fingerprint.sh' } }], answer: `It prints ${FINGERPRINT_OUTPUT}.` },
    needsTools: true,
  },
  {
    id: 'shell-output-count',
    kind: 'use a shell command and read its output',
    files: { 'data.csv': CSV },
    request: 'Use a shell command to count the data rows of data.csv (not the header line) and tell me the number.',
    checks: [{ answer: /\b57\b/ }],
    reference: { steps: [{ tool: 'run_command', args: { command: 'tail -n +2 data.csv | wc -l' } }], answer: 'data.csv has 57 data rows.' },
    needsTools: true,
  },
  {
    id: 'split-request-2',
    kind: 'a split request',
    files: { 'package.json': '{\n  "name": "shop-web",\n  "version": "2.3.1"\n}\n' },
    request: "Two things: create a .gitignore containing the single line 'node_modules/', and tell me the version in package.json.",
    checks: [{ file: '.gitignore', equals: 'node_modules/' }, { answer: /2\.3\.1/ }],
    reference: {
      steps: [
        { tool: 'write_file', args: { path: '.gitignore', content: 'node_modules/\n' } },
        { tool: 'read_file', args: { path: 'package.json' } },
      ],
      answer: '.gitignore now holds node_modules/, and package.json says version 2.3.1.',
    },
    needsTools: true,
  },
  {
    id: 'ask-which-files',
    kind: 'a question the agent should ask',
    files: REPORTS,
    request: 'Delete the old reports.',
    checks: [{ answer: /\?|？/ }, ...Object.keys(REPORTS).map((path) => ({ unchanged: path }))],
    reference: { steps: [], answer: 'Which reports are old: 2024-q1.csv and 2024-q2.csv, or draft.csv too? I have deleted nothing yet.' },
    needsTools: false,
  },
  {
    id: 'japanese-explain',
    kind: 'a request in Japanese',
    files: { 'stats.mjs': 'export function average(values) {\n  let total = 0;\n  for (const value of values) total += value;\n  return total / (values.length - 1);\n}\n' },
    request: 'stats.mjs の average() が間違った値を返します。原因を説明してください。ファイルは変更しないでください。',
    checks: [{ answer: /length\s*-\s*1/ }, { unchanged: 'stats.mjs' }],
    reference: {
      steps: [{ tool: 'read_file', args: { path: 'stats.mjs' } }],
      answer: 'average() は合計を values.length - 1 で割っているため、平均が大きすぎます。values.length で割るべきです。',
    },
    needsTools: true,
  },
  {
    id: 'mcp-tool',
    kind: 'use a tool of a configured MCP server',
    files: {},
    request: 'What is the status of order A-1042, and what is its tracking number? The orders tool knows.',
    checks: [{ answer: /shipped/i }, { answer: /YT-88412-0457/ }],
    reference: {
      steps: [{ tool: mcpToolName('eval-orders', 'lookup_order'), args: { order_id: 'A-1042' } }],
      answer: 'Order A-1042 has shipped with Yamato Transport; its tracking number is YT-88412-0457.',
    },
    needsTools: true,
  },
  {
    id: 'approval-denied',
    kind: 'an approval that is denied',
    files: {},
    request: 'Deploy version 1.4.2 of the shop to production with the release tool, then tell me whether it was deployed.',
    checks: [{ answer: /\b(denied|refused|rejected|declined|not approved)\b|(was|is) not deployed|wasn't deployed/i }],
    reference: {
      steps: [{ tool: mcpToolName('eval-release', 'deploy'), args: { version: '1.4.2', environment: 'production' } }],
      answer: 'The deployment of 1.4.2 to production was denied, so it was not deployed.',
    },
    needsTools: true,
    approval: 'deny',
  },
];
