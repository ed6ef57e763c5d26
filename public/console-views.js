// More console views, on console.js's helpers (h, api, clock, status…), which load after this file
// and are only called from here once the page runs: #/approvals (everyone's own, admins all),
// #/skills (the skills the signed-in user can use) and #/usage (admins). Plain DOM, values as text only.
/* global api, h, setView, signedIn, local, short, approvalItem, handleAuthError, scheduleRefresh, banner */
/* exported refreshApprovalBadge, approvalsView, skillsView, usageView */
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

/** Tokens per user over all their Tasks (admins). */
async function usageView() {
  const body = h('tbody', { id: 'usage' });
  setView(
    h('h2', {}, 'Token usage per user'),
    h(
      'div',
      { className: 'card scroll' },
      h('table', {}, h('thead', {}, h('tr', {}, ...['User', 'Tasks', 'Input tokens', 'Output tokens', 'Total'].map((c) => h('th', { scope: 'col' }, c)))), body),
    ),
  );
  try {
    const { items } = await api('usage?limit=1000');
    body.replaceChildren(
      ...items.map((row) =>
        h(
          'tr',
          {},
          h('td', {}, h('a', { href: `#/tasks?owner=${encodeURIComponent(row.owner)}` }, row.owner)),
          h('td', { className: 'num' }, row.tasks),
          h('td', { className: 'num' }, row.token_usage.input),
          h('td', { className: 'num' }, row.token_usage.output),
          h('td', { className: 'num' }, row.token_usage.total),
        ),
      ),
    );
    if (items.length === 0) body.append(h('tr', {}, h('td', { colSpan: 5, className: 'muted' }, 'No Tasks yet.')));
  } catch (error) {
    if (!handleAuthError(error)) body.replaceChildren(h('tr', {}, h('td', { colSpan: 5 }, banner(error.message))));
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
