// Console views of work that starts by itself (issue 38), on console.js's helpers: #/schedules and
// #/schedules/<id>, #/triggers and #/triggers/<id>, for every signed-in user (their own; admins all).
// Plain DOM, every value as text only; a secret is shown once, right after it is made.
/* global api, h, setView, signedIn, local, short, handleAuthError, banner */
/* exported schedulesView, triggersView */
'use strict';

const field = (label, input) => h('label', {}, label, input);
const choice = (name, options, value) => h('select', { name }, ...options.map((option) => h('option', { value: option, selected: option === value }, option)));

/** The form's named fields as an object: text as typed, blank optional ones left out. */
function formValues(form, optional = []) {
  const values = {};
  for (const element of form.elements) {
    if (!element.name) continue;
    if (element.type === 'checkbox') values[element.name] = element.checked;
    else if (!(optional.includes(element.name) && element.value.trim() === '')) values[element.name] = element.value;
  }
  return values;
}

/** A form that sends its values as JSON to `path`; refusals (400 naming the field) are shown under it. */
function jsonForm(id, method, path, fields, optional, done) {
  const problem = h('p', { className: 'problem', role: 'alert' });
  const form = h(
    'form',
    { id, className: 'automation-form' },
    ...fields,
    h('div', {}, h('button', { type: 'submit', className: 'primary' }, method === 'POST' ? 'Create' : 'Save')),
    problem,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    problem.textContent = '';
    try {
      done(await api(path, { method, json: formValues(form, optional) }));
    } catch (error) {
      if (!handleAuthError(error)) problem.textContent = error.message;
    }
  });
  return form;
}

/** A button that calls the API (`json`: its body), then `after` with the answer; a refusal is shown in place. */
function actionButton(label, { method, path, json }, after, className = '') {
  return h(
    'button',
    {
      type: 'button',
      className,
      onclick: async (event) => {
        event.target.disabled = true;
        try {
          after(await api(path, { method, json }));
        } catch (error) {
          if (!handleAuthError(error)) event.target.after(banner(error.message));
        }
        event.target.disabled = false;
      },
    },
    label,
  );
}

const taskLink = (taskId) => (taskId ? h('a', { href: `#/tasks/${taskId}`, className: 'mono', title: taskId }, short(taskId)) : h('span', { className: 'muted' }, '—'));

/** A table of runs with an "Older" button that loads the next page. */
function runsTable(path, columns, cells) {
  const body = h('tbody', { id: 'runs' });
  const more = h('button', { type: 'button', hidden: true }, 'Older');
  let before = null;
  const load = async () => {
    const page = await api(`${path}?limit=50${before ? `&before=${encodeURIComponent(before)}` : ''}`);
    body.append(...page.runs.map((run) => h('tr', { dataset: { runId: run.id } }, ...cells(run).map((cell) => h('td', {}, cell)))));
    if (page.runs.length === 0 && !before) body.append(h('tr', {}, h('td', { colSpan: columns.length, className: 'muted' }, 'No runs yet.')));
    before = page.next_before;
    more.hidden = !before;
  };
  more.addEventListener('click', () => load().catch((error) => handleAuthError(error) || more.after(banner(error.message))));
  const table = h('table', {}, h('thead', {}, h('tr', {}, ...columns.map((column) => h('th', { scope: 'col' }, column)))), body);
  return { element: h('div', { className: 'card scroll' }, table, more), load };
}

// ---- schedules ----------------------------------------------------------------------------------

function scheduleFields(schedule = {}) {
  return [
    field('Name', h('input', { name: 'name', required: true, maxLength: 200, value: schedule.name ?? '' })),
    field('Cron (five fields, or six with seconds first)', h('input', { name: 'cron', required: true, maxLength: 200, value: schedule.cron ?? '', placeholder: '0 9 * * 1-5' })),
    field('Time zone (IANA)', h('input', { name: 'timezone', maxLength: 64, value: schedule.timezone ?? 'UTC' })),
    field('Request', h('textarea', { name: 'request', required: true, maxLength: 16000, rows: 3, value: schedule.request ?? '' })),
    field('Session', choice('session', ['new', 'continue'], schedule.session ?? 'new')),
    field('When an action needs a person', choice('approvals', ['deny', 'wait'], schedule.approvals ?? 'deny')),
  ];
}

async function schedulesView(params, id) {
  if (id) return scheduleView(id);
  const body = h('tbody', { id: 'schedules' });
  const created = h('div', { role: 'status' });
  const load = async () => {
    const { schedules } = await api('schedules');
    body.replaceChildren(
      ...schedules.map((schedule) =>
        h(
          'tr',
          { dataset: { scheduleId: schedule.id } },
          h('td', {}, h('a', { href: `#/schedules/${schedule.id}` }, schedule.name)),
          h('td', { className: 'mono' }, `${schedule.cron} (${schedule.timezone})`),
          h('td', {}, schedule.enabled ? 'active' : 'paused'),
          h('td', {}, schedule.next_fire_at ? local(schedule.next_fire_at) : '—'),
          signedIn.admin ? h('td', {}, schedule.owner) : null,
          h(
            'td',
            {},
            actionButton('Run now', { method: 'POST', path: `schedules/${schedule.id}/run` }, () => load()),
            schedule.declared
              ? null
              : actionButton(schedule.enabled ? 'Pause' : 'Resume', { method: 'PATCH', path: `schedules/${schedule.id}`, json: { enabled: !schedule.enabled } }, () => load()),
          ),
        ),
      ),
    );
    if (schedules.length === 0) body.append(h('tr', {}, h('td', { colSpan: 6, className: 'muted' }, 'No schedules yet.')));
  };
  const form = jsonForm('new-schedule', 'POST', 'schedules', scheduleFields(), ['timezone'], (schedule) => {
    form.reset();
    created.replaceChildren(banner(`Schedule “${schedule.name}” made; next fire ${schedule.next_fire_at ? local(schedule.next_fire_at) : '—'}.`, false));
    load();
  });
  const heads = ['Name', 'Cron', 'State', 'Next fire', ...(signedIn.admin ? ['Owner'] : []), ''];
  setView(
    h('h2', {}, 'Schedules'),
    h('p', { className: 'muted' }, signedIn.admin ? 'Everyone’s schedules; each runs as its owner.' : 'Your schedules: each fire starts a Task of yours.'),
    h('div', { className: 'card scroll' }, h('table', {}, h('thead', {}, h('tr', {}, ...heads.map((c) => h('th', { scope: 'col' }, c)))), body)),
    h('section', { className: 'card' }, h('h3', {}, 'New schedule'), form, created),
  );
  try {
    await load();
  } catch (error) {
    if (!handleAuthError(error)) body.replaceChildren(h('tr', {}, h('td', { colSpan: 6 }, banner(error.message))));
  }
}

async function scheduleView(id) {
  let schedule;
  try {
    schedule = await api(`schedules/${encodeURIComponent(id)}`);
  } catch (error) {
    if (!handleAuthError(error)) setView(h('h2', {}, 'Schedule'), banner(error.message));
    return;
  }
  const runs = runsTable(`schedules/${schedule.id}/runs`, ['Fire time', 'Kind', 'Outcome', 'Task', 'Status', 'First line'], (run) => [
    local(run.fire_at),
    run.kind,
    run.skipped ? 'skipped' : run.state,
    taskLink(run.task_id),
    run.task_status ?? run.reason ?? '',
    run.result_first_line ?? '',
  ]);
  const edit = schedule.declared
    ? h('p', { className: 'muted' }, 'Declared in the configuration (schedules:): change it there.')
    : jsonForm('edit-schedule', 'PATCH', `schedules/${schedule.id}`, scheduleFields(schedule), [], () => scheduleView(id));
  setView(
    h('h2', {}, `Schedule “${schedule.name}”`),
    h(
      'p',
      {},
      `${schedule.enabled ? 'Active' : 'Paused'} · ${schedule.cron} (${schedule.timezone}) · owner ${schedule.owner} · next fire ${schedule.next_fire_at ? local(schedule.next_fire_at) : '—'} `,
      actionButton('Run now', { method: 'POST', path: `schedules/${schedule.id}/run` }, () => scheduleView(id), 'primary'),
      schedule.declared ? null : actionButton('Delete', { method: 'DELETE', path: `schedules/${schedule.id}` }, () => (location.hash = '#/schedules'), 'danger'),
    ),
    h('section', { className: 'card' }, h('h3', {}, 'Edit'), edit),
    h('h3', {}, 'Runs'),
    runs.element,
  );
  await runs.load().catch((error) => handleAuthError(error) || runs.element.append(banner(error.message)));
}

// ---- triggers -----------------------------------------------------------------------------------

function triggerFields(trigger = {}) {
  return [
    field('Name', h('input', { name: 'name', required: true, maxLength: 200, value: trigger.name ?? '' })),
    trigger.id ? null : field('Sender', choice('kind', ['github', 'standard'], 'github')),
    field('Request (a template: {{event}}, {{payload.issue.title}}…)', h('textarea', { name: 'request', required: true, maxLength: 16000, rows: 3, value: trigger.request ?? '' })),
    field('Session', choice('session', ['new', 'continue'], trigger.session ?? 'new')),
    field('When an action needs a person', choice('approvals', ['deny', 'wait'], trigger.approvals ?? 'deny')),
  ];
}

async function triggersView(params, id) {
  if (id) return triggerView(id);
  const body = h('tbody', { id: 'triggers' });
  const created = h('div', { role: 'status', id: 'trigger-created' });
  const load = async () => {
    const { triggers } = await api('triggers');
    body.replaceChildren(
      ...triggers.map((trigger) =>
        h(
          'tr',
          { dataset: { triggerId: trigger.id } },
          h('td', {}, h('a', { href: `#/triggers/${trigger.id}` }, trigger.name)),
          h('td', {}, trigger.kind),
          h('td', { className: 'mono' }, `${location.origin}${trigger.path}`),
          h('td', {}, trigger.enabled ? 'active' : 'off'),
          signedIn.admin ? h('td', {}, trigger.owner) : null,
        ),
      ),
    );
    if (triggers.length === 0) body.append(h('tr', {}, h('td', { colSpan: 5, className: 'muted' }, 'No triggers yet.')));
  };
  const form = jsonForm('new-trigger', 'POST', 'triggers', triggerFields(), [], (trigger) => {
    form.reset();
    created.replaceChildren(
      banner('Trigger made. Give the sender this URL and secret; the secret is not shown again.', false),
      h(
        'dl',
        {},
        h('dt', {}, 'URL'),
        h('dd', { className: 'mono' }, `${location.origin}${trigger.path}`),
        h('dt', {}, 'Secret'),
        h('dd', { className: 'mono secret' }, trigger.secret),
      ),
    );
    load();
  });
  const heads = ['Name', 'Sender', 'URL', 'State', ...(signedIn.admin ? ['Owner'] : [])];
  setView(
    h('h2', {}, 'Triggers'),
    h('p', { className: 'muted' }, 'A signed event (GitHub, Standard Webhooks) posted to a trigger’s URL starts a Task of its owner.'),
    h('div', { className: 'card scroll' }, h('table', {}, h('thead', {}, h('tr', {}, ...heads.map((c) => h('th', { scope: 'col' }, c)))), body)),
    h('section', { className: 'card' }, h('h3', {}, 'New trigger'), form, created),
  );
  try {
    await load();
  } catch (error) {
    if (!handleAuthError(error)) body.replaceChildren(h('tr', {}, h('td', { colSpan: 5 }, banner(error.message))));
  }
}

async function triggerView(id) {
  let trigger;
  try {
    trigger = await api(`triggers/${encodeURIComponent(id)}`);
  } catch (error) {
    if (!handleAuthError(error)) setView(h('h2', {}, 'Trigger'), banner(error.message));
    return;
  }
  const runs = runsTable(`triggers/${trigger.id}/runs`, ['Received', 'Event', 'Delivery', 'Task', 'Status', 'First line'], (run) => [
    local(run.received_at),
    run.event,
    run.delivery_id,
    taskLink(run.task_id),
    run.task_status ?? run.reason ?? '',
    run.result_first_line ?? '',
  ]);
  setView(
    h('h2', {}, `Trigger “${trigger.name}”`),
    h(
      'p',
      {},
      `${trigger.enabled ? 'Active' : 'Off'} · ${trigger.kind} · owner ${trigger.owner} · `,
      h('span', { className: 'mono' }, `${location.origin}${trigger.path}`),
      ' ',
      actionButton(trigger.enabled ? 'Turn off' : 'Turn on', { method: 'PATCH', path: `triggers/${trigger.id}`, json: { enabled: !trigger.enabled } }, () => triggerView(id)),
      actionButton('Delete', { method: 'DELETE', path: `triggers/${trigger.id}` }, () => (location.hash = '#/triggers'), 'danger'),
    ),
    h(
      'section',
      { className: 'card' },
      h('h3', {}, 'Edit'),
      jsonForm('edit-trigger', 'PATCH', `triggers/${trigger.id}`, triggerFields(trigger), [], () => triggerView(id)),
    ),
    h('h3', {}, 'Deliveries'),
    runs.element,
  );
  await runs.load().catch((error) => handleAuthError(error) || runs.element.append(banner(error.message)));
}
