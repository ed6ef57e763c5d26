import { ROUTES, type Route } from '../../src/http/route-table.js';

const MARK = { begin: '<!-- route-table:begin (test/unit/route-table.spec.ts writes it from src/http/route-table.ts) -->', end: '<!-- route-table:end -->' };

const cell = (route: Route) => [
  route.method,
  `\`${route.path}\``,
  route.owner,
  route.serving,
  route.access + (route.publicRoute ? ` (\`${route.publicRoute}\`)` : ''),
  route.body,
  route.documented + (route.only ? `; only with ${route.only}` : ''),
];

/** docs/architecture.md's route section as the table makes it, between its markers. */
export function renderRouteTable(): string {
  const rows = [['Method', 'Path', 'Owner', 'Served by', 'Access', 'Body', 'Described by'], ['---', '---', '---', '---', '---', '---', '---'], ...ROUTES.map(cell)];
  return [MARK.begin, ...rows.map((row) => `| ${row.join(' | ')} |`), MARK.end].join('\n');
}

/** The section as docs/architecture.md has it, markers included, or null without them. */
export function committedRouteTable(markdown: string): string | null {
  const begin = markdown.indexOf(MARK.begin);
  const end = markdown.indexOf(MARK.end);
  return begin < 0 || end < begin ? null : markdown.slice(begin, end + MARK.end.length);
}
