// More console views, on console.js's helpers (h, api, clock, status…), which load after this file
// and are only called from here once the page runs: #/approvals (everyone's own, admins all),
// #/skills (the skills the signed-in user can use), #/usage (everyone's own, admins all) and #/models (admins: the
// last `npm run eval` result per model). Plain DOM, values as text only.
/* global api, h, setView, signedIn, local, short, approvalItem, handleAuthError, scheduleRefresh, banner, duration */
/* exported refreshApprovalBadge, approvalsView, skillsView, usageView, modelsView */
'use strict';

/** The header badge: how many approvals wait for the signed-in user (admins: for anyone). */
async function refreshApprovalBadge() {
  const badge = document.getElementById('approvals-badge');
  try {
    const { items } = await api('approvals?limit=100', { refresh: true });
    badge.textContent = items.length ? String(items.length) : '';
    badge.hidden = items.length === 0;
    badge.title = `${items.length} approval${items.length === 1 ? '' : 's'} waiting`;
  } catch {
    badge.hidden = true;
  }
}

async function approvalsView() {
  const list = h('ul', { id: 'approvals', className: 'approvals' });
  const note = h('p', { className: 'muted', role: 'status' }, 'Loading…');
  setView(
    h('h2', {}, 'Waiting for approval'),
    h(
      'p',
      { className: 'muted' },
      signedIn.admin
        ? 'Everyone’s pending approvals; each owner answers their own.'
        : 'Your Tasks’ pending approvals: approve or deny here, and the Task goes on with your decision.',
    ),
    h('section', { className: 'card' }, note, list),
  );
  const load = async (refresh = false) => {
    try {
      const { items } = await api('approvals?limit=100', { refresh });
      note.textContent = items.length ? `${items.length} waiting · updated ${local(new Date().toISOString())}` : 'Nothing waits for an approval.';
      list.replaceChildren(
        ...items.map((item) =>
          h(
            'li',
            { dataset: { approvalId: item.approval_id } },
            h(
              'div',
              {},
              h('a', { href: `#/tasks/${item.task_id}`, className: 'mono', title: item.task_id }, `Task ${short(item.task_id)}`),
              h('span', { className: 'muted' }, ` · ${item.owner}`),
            ),
            ...approvalItem(item, () => {
              load(false);
              refreshApprovalBadge();
            }),
          ),
        ),
      );
    } catch (error) {
      if (!handleAuthError(error)) note.textContent = error.message;
      return;
    }
    scheduleRefresh(() => load(true));
  };
  await load();
}

/**
 * Usage per UTC day over the last 30 days (GET /admin/usage: admins everyone's, a user their own): a bar per day
 * of the tokens spent (input and output), then the days and users as a table.
 */
async function usageView() {
  const chart = h('div', { id: 'usage-chart', className: 'usage-chart', role: 'img' });
  const body = h('tbody', { id: 'usage' });
  const columns = ['Day', 'User', 'Tasks', 'Model calls', 'Tool calls', 'Input tokens', 'Output tokens', 'Total', 'Wall time'];
  setView(
    h('h2', {}, 'Usage per day'),
    h('div', { className: 'card' }, chart),
    h('div', { className: 'card scroll' }, h('table', {}, h('thead', {}, h('tr', {}, ...columns.map((c) => h('th', { scope: 'col' }, c)))), body)),
  );
  try {
    const { from, to, days } = await api('usage');
    const totals = new Map();
    for (let day = Date.parse(from); day <= Date.parse(to); day += 86_400_000) totals.set(new Date(day).toISOString().slice(0, 10), { input: 0, output: 0 });
    for (const row of days) {
      const total = totals.get(row.day);
      if (total) Object.assign(total, { input: total.input + row.input_tokens, output: total.output + row.output_tokens });
    }
    const most = Math.max(1, ...[...totals.values()].map((total) => total.input + total.output));
    chart.setAttribute('aria-label', `Tokens per day from ${from} to ${to}`);
    chart.replaceChildren(
      ...[...totals].map(([day, { input, output }]) => {
        const bar = h('div', { className: 'usage-bar' });
        // Through the CSSOM: the page's CSP (style-src 'self') refuses style attributes.
        bar.style.height = `${Math.round(((input + output) / most) * 100)}%`;
        const title = `${day}: ${input + output} tokens (${input} in, ${output} out)`;
        return h('div', { className: 'usage-day', title, dataset: { day, tokens: String(input + output) } }, bar, h('span', { className: 'usage-label' }, day.slice(8)));
      }),
    );
    body.replaceChildren(
      ...[...days]
        .reverse()
        .map((row) =>
          h(
            'tr',
            {},
            h('td', {}, row.day),
            h('td', {}, h('a', { href: `#/tasks?owner=${encodeURIComponent(row.user)}` }, row.user)),
            ...[row.tasks, row.model_calls, row.tool_calls, row.input_tokens, row.output_tokens, row.total_tokens].map((n) => h('td', { className: 'num' }, n)),
            h('td', { className: 'num' }, duration(row.wall_ms)),
          ),
        ),
    );
    if (days.length === 0) body.append(h('tr', {}, h('td', { colSpan: columns.length, className: 'muted' }, 'No Tasks ended in these days.')));
  } catch (error) {
    if (!handleAuthError(error)) body.replaceChildren(h('tr', {}, h('td', { colSpan: columns.length }, banner(error.message))));
  }
}

/** The skills the signed-in user's Tasks can use (the agent lists the same), with where each comes from. */
async function skillsView() {
  const body = h('tbody', { id: 'skills' });
  setView(
    h('h2', {}, 'Skills'),
    h('p', { className: 'muted' }, 'Procedures the agent loads when a request needs them: the operator’s folders your groups allow, then the MCP servers’.'),
    h(
      'div',
      { className: 'card scroll' },
      h('table', {}, h('thead', {}, h('tr', {}, ...['Skill', 'Description', 'From', 'Groups', 'Files'].map((c) => h('th', { scope: 'col' }, c)))), body),
    ),
  );
  try {
    const { skills } = await api('skills');
    body.replaceChildren(
      ...skills.map((skill) =>
        h(
          'tr',
          {},
          h('td', { className: 'mono' }, skill.name),
          h('td', {}, skill.description),
          h('td', {}, skill.origin === 'mcp' ? 'MCP server' : 'operator'),
          h('td', {}, skill.allow_groups.length ? skill.allow_groups.join(', ') : 'everyone'),
          h('td', { className: 'mono' }, skill.files.join(', ')),
        ),
      ),
    );
    if (skills.length === 0) body.append(h('tr', {}, h('td', { colSpan: 5, className: 'muted' }, 'No skills for you.')));
  } catch (error) {
    if (!handleAuthError(error)) body.replaceChildren(h('tr', {}, h('td', { colSpan: 5 }, banner(error.message))));
  }
}

const percent = (share) => `${Math.round(share * 100)}%`;

/**
 * The last `npm run eval` result of every model evaluated against this database (GET /admin/eval-results, issue 41):
 * one card per model, a row per harness (through the service; with --baseline, the bare tool loop too).
 */
async function modelsView() {
  const cards = h('div', { id: 'models' }, h('p', { className: 'muted', role: 'status' }, 'Loading…'));
  setView(
    h('h2', {}, 'Models'),
    h(
      'p',
      { className: 'muted' },
      'How each model did in its last `npm run eval` on this installation: pass@1 is the share of runs passed, pass^N the share of cases passed in all N runs (docs/eval.md).',
    ),
    cards,
  );
  const columns = ['Harness', 'Date', 'Service', 'pass@1', 'pass^N', 'Cases', 'Model calls', 'Prompt tokens', 'Output tokens'];
  try {
    const { items } = await api('eval-results');
    const byModel = new Map();
    for (const item of items) byModel.set(item.model, [...(byModel.get(item.model) ?? []), item]);
    cards.replaceChildren(
      ...[...byModel].map(([model, results]) =>
        h(
          'section',
          { className: 'card scroll model-card', dataset: { model } },
          h('h3', { className: 'mono' }, model),
          h(
            'table',
            {},
            h('thead', {}, h('tr', {}, ...columns.map((c) => h('th', { scope: 'col' }, c)))),
            h(
              'tbody',
              {},
              ...results.map((result) =>
                h(
                  'tr',
                  { dataset: { harness: result.harness } },
                  h('td', {}, result.harness),
                  h('td', { title: result.finished_at }, `${result.finished_at.slice(0, 10)}${result.complete ? '' : ' (stopped early)'}`),
                  h('td', { className: 'mono' }, result.service_version),
                  h('td', { className: 'num' }, percent(result.pass_at_1)),
                  h('td', { className: 'num' }, `${percent(result.pass_all_n)} (N=${result.repeat})`),
                  ...[result.cases, result.model_calls, result.prompt_tokens, result.output_tokens].map((n) => h('td', { className: 'num' }, n)),
                ),
              ),
            ),
          ),
        ),
      ),
    );
    if (items.length === 0)
      cards.replaceChildren(h('p', { className: 'muted', id: 'no-eval-results' }, 'No model was evaluated against this database yet: `npm run eval` measures the configured one.'));
  } catch (error) {
    if (!handleAuthError(error)) cards.replaceChildren(banner(error.message));
  }
}
