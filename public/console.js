// The console: plain DOM, no framework, no inline script (strict CSP). Every value from the API goes in
// as text (textContent), never as markup, but for answers, which render as sanitised Markdown
// (console-conversation.js). Views: #/chat (console-conversation.js), #/tasks, #/tasks/<id>, #/approvals, #/skills,
// #/usage, #/schedules and #/triggers (console-automation.js); admins also #/audit and #/models (console-views.js). Any
// signed-in user sees their own Tasks and usage; admins everyone's.
/* global refreshApprovalBadge, usageView, modelsView, approvalsView, skillsView, schedulesView, triggersView, chatView, liveTask, markdown, consoleOptions -- defined in console-views.js, console-automation.js and console-conversation.js */
'use strict';

const AUTH_MODE = document.querySelector('meta[name="oam-auth-mode"]').content;
const TOKEN_KEY = 'oam-admin-token';
// Works at /admin and under a path prefix added by a proxy.
const BASE = location.pathname.replace(/\/admin\/?$/, '');
const ACTIVE = ['queued', 'planning', 'running'];
const STATUSES = ['queued', 'planning', 'running', 'awaiting_approval', 'completed', 'failed', 'cancelled'];
const SURFACES = { 'mcp-http': 'MCP', stdio: 'stdio', chat: 'Chat', a2a: 'A2A', http: 'console', schedule: 'schedule', trigger: 'trigger' };
const REFRESH_MS = 3000;
const PAGE_SIZE = 50;

let refreshTimer = null;
let signedIn = null;

/** h('td', { className: 'x' }, 'text', child…): an element with properties and text or element children. */
function h(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'dataset') Object.assign(element.dataset, value);
    else if (key.startsWith('on')) element.addEventListener(key.slice(2), value);
    else if (key in element) element[key] = value;
    else element.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) if (child !== null && child !== undefined && child !== false) element.append(child instanceof Node ? child : String(child));
  return element;
}

class ApiError extends Error {
  constructor(status, message) {
    super(`${status}: ${message}`);
    this.status = status;
  }
}

/** With auth.mode none the admin token from the sign-in form; behind the SSO proxy, nothing (the proxy adds identity). */
function authHeaders() {
  const token = sessionStorage.getItem(TOKEN_KEY);
  return AUTH_MODE === 'none' && token ? { Authorization: `Bearer ${token}` } : {};
}

/** `refresh: true` marks a view's automatic re-read, which the service does not audit (what a person did is); `json` is sent as the body. */
async function api(path, { refresh = false, json, ...options } = {}) {
  const headers = { ...authHeaders(), ...(refresh ? { 'X-Console-Refresh': '1' } : {}), ...(json === undefined ? {} : { 'Content-Type': 'application/json' }) };
  const res = await fetch(`${BASE}/admin/${path}`, { ...options, ...(json === undefined ? {} : { body: JSON.stringify(json) }), headers, credentials: 'same-origin' });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new ApiError(res.status, body.message ?? res.statusText);
  return body;
}

// ---- formatting -------------------------------------------------------------------------------

const clip = (text, chars) => (text.length > chars ? `${text.slice(0, chars)}…` : text);
const short = (id) => (id ? id.slice(0, 8) : '');
function duration(ms) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return '';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.round(s % 60)} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}
const between = (from, to) => (from && to ? Date.parse(to) - Date.parse(from) : null);
function age(iso) {
  const ms = Date.now() - Date.parse(iso);
  return ms < 5000 ? 'just now' : `${duration(ms).replace(/ \d+ s$/, '')} ago`;
}
const utc = (iso) =>
  new Date(iso)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC');
const two = (n) => String(n).padStart(2, '0');
/** Local time everywhere (one zone for the whole console), the UTC instant on hover. */
function local(iso, withMs = false) {
  const d = new Date(iso);
  const ms = withMs ? `.${String(d.getMilliseconds()).padStart(3, '0')}` : '';
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}${ms}`;
}
const clock = (iso, withMs = false) => (iso ? h('time', { dateTime: iso, title: utc(iso) }, local(iso, withMs)) : '—');
const ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone || 'local time';
const statusLabel = (value) => value.replace('_', ' ');
/** A Task's badge: waiting for an approval is a status of its own, whatever the row says. */
const status = (task) => {
  const value = task.awaiting_approval ? 'awaiting_approval' : task.status;
  return h('span', { className: `status ${value}` }, statusLabel(value));
};

function progressOf(task) {
  if (task.awaiting_approval && !ACTIVE.includes(task.status)) return 'waiting for an answer';
  if (task.status === 'queued') return task.queue_position ? `#${task.queue_position} in queue` : 'queued';
  if (!ACTIVE.includes(task.status)) return `${task.completed_tasks}/${task.total_tasks} subtasks`;
  const bar = h('progress', { max: Math.max(task.total_tasks, 1), value: task.completed_tasks, 'aria-label': 'subtasks done' });
  return h('span', {}, bar, ` ${task.completed_tasks}/${task.total_tasks}`, task.current_task ? h('div', { className: 'muted' }, task.current_task) : null);
}

function setView(...children) {
  clearTimeout(refreshTimer);
  document.getElementById('view').replaceChildren(...children);
}

function banner(text, bad = true) {
  return h('div', { className: `banner${bad ? ' bad' : ''}`, role: 'alert' }, text);
}

// ---- cancel -----------------------------------------------------------------------------------

function cancelButton(task, after) {
  if (!ACTIVE.includes(task.status)) return null;
  return h(
    'button',
    {
      type: 'button',
      className: 'danger cancel',
      onclick: async (event) => {
        if (!confirm(`Cancel Task ${short(task.task_id)} (${task.status})?\n\n${task.request.slice(0, 200)}`)) return;
        event.target.disabled = true;
        try {
          await api(`tasks/${encodeURIComponent(task.task_id)}/cancel`, { method: 'POST' });
        } catch (error) {
          alert(`Cancel failed: ${error.message}`);
        }
        after();
      },
    },
    'Cancel…',
  );
}

// ---- steer ------------------------------------------------------------------------------------

/**
 * A running Task's correction box (issue 35): the text reaches the model as the person's words at its next
 * step. A Task paused for a person has it too: the correction is kept and the model reads it when the wait ends.
 */
function steerBox(task, after) {
  const running = task.status === 'planning' || task.status === 'running';
  if (!running && !task.awaiting_approval) return null;
  const placeholder = running ? 'A correction for the running Task' : 'A correction kept until the request above is answered';
  const input = h('input', { type: 'text', id: 'steer-text', maxLength: 8000, placeholder, 'aria-label': 'Correction' });
  const send = async (event) => {
    event.preventDefault();
    if (input.value.trim() === '') return;
    try {
      await api(`tasks/${encodeURIComponent(task.task_id)}/steer?text=${encodeURIComponent(input.value)}`, { method: 'POST' });
      input.value = '';
    } catch (error) {
      alert(`Steer failed: ${error.message}`);
    }
    after();
  };
  // Typing holds the page's refresh (see scheduleRefresh), as a form being filled does.
  const form = h('form', { className: 'card toolbar', id: 'steer', onsubmit: send, oninput: () => (form.dataset.edited = '1') }, input, h('button', { type: 'submit' }, 'Steer'));
  return form;
}

// ---- Tasks view -------------------------------------------------------------------------------

/** `2026-12-04T10:00` from a date-time field (local time) as the ISO instant the API takes; '' stays ''. */
const instant = (value) => (value ? new Date(value).toISOString() : '');
/** An ISO instant as a date-time field's value (local time). */
const fieldTime = (iso) => local(iso).replace(' ', 'T');

async function tasksView(params) {
  const admin = signedIn.admin;
  const form = h(
    'form',
    { className: 'filters card', id: 'task-filters', role: 'search' },
    h('label', {}, 'search', h('input', { name: 'q', type: 'search', size: 22, placeholder: 'words in request or result' })),
    h('label', {}, 'status', h('select', { name: 'status' }, h('option', { value: '' }, 'any'), ...STATUSES.map((s) => h('option', { value: s }, statusLabel(s))))),
    h(
      'label',
      {},
      'surface',
      h('select', { name: 'surface' }, h('option', { value: '' }, 'any'), ...Object.entries(SURFACES).map(([value, label]) => h('option', { value }, label))),
    ),
    admin ? h('label', {}, 'owner', h('input', { name: 'owner', size: 18 })) : null,
    h('label', {}, 'session', h('input', { name: 'session_id', size: 18, placeholder: 'session id' })),
    h('label', {}, `from (${ZONE})`, h('input', { name: 'from', type: 'datetime-local' })),
    h('label', {}, 'to', h('input', { name: 'to', type: 'datetime-local' })),
    h('button', { type: 'submit', className: 'primary' }, 'Filter'),
    h('span', { className: 'grow' }),
    h('span', { id: 'tasks-status', role: 'status', className: 'muted' }),
  );
  for (const [key, value] of params) if (form.elements[key]) form.elements[key].value = key === 'from' || key === 'to' ? fieldTime(value) : value;
  const body = h('tbody', { id: 'tasks' });
  const more = h('button', { id: 'more-tasks', type: 'button', hidden: true }, `Next ${PAGE_SIZE}`);
  const columns = ['Status', 'Task', 'Request', 'Owner', 'Surface', 'Session', 'Age', 'Queue / progress', 'Tokens', ''];
  const table = h('table', {}, h('thead', {}, h('tr', {}, ...columns.map((c) => h('th', { scope: 'col' }, c)))), body);
  setView(h('h2', {}, admin ? 'Tasks' : 'My Tasks'), form, h('div', { className: 'card scroll' }, table, more));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const query = new URLSearchParams();
    for (const [key, value] of new FormData(form)) if (value) query.set(key, key === 'from' || key === 'to' ? instant(String(value)) : String(value));
    location.hash = `#/tasks${query.size ? `?${query}` : ''}`;
  });

  const row = (task) =>
    h(
      'tr',
      { dataset: { taskId: task.task_id, status: task.awaiting_approval ? 'awaiting_approval' : task.status } },
      h('td', {}, status(task)),
      h('td', { className: 'mono' }, h('a', { href: `#/tasks/${task.task_id}`, title: task.task_id }, short(task.task_id))),
      h('td', { className: 'detail' }, clip(task.request, 140)),
      h('td', {}, task.owner),
      h('td', { className: 'surface' }, SURFACES[task.surface] ?? '—'),
      h('td', { className: 'mono' }, h('a', { href: `#/tasks?session_id=${task.session_id}`, title: task.session_id }, short(task.session_id))),
      h('td', { title: `${local(task.created_at)} · ${utc(task.created_at)}` }, age(task.created_at)),
      h('td', { className: 'progress' }, progressOf(task)),
      h('td', {}, task.token_usage.total),
      h(
        'td',
        {},
        cancelButton(task, () => load(true)),
      ),
    );
  let cursor = null;
  let pages = 1;
  // The first page refreshes itself while it is the only one shown; pages further on stay as read.
  const load = async (refresh = false, append = false) => {
    const query = new URLSearchParams(params);
    query.set('limit', String(PAGE_SIZE));
    if (append && cursor) query.set('cursor', cursor);
    try {
      const page = await api(`tasks?${query}`, { refresh });
      if (append) {
        body.append(...page.items.map(row));
        pages += 1;
      } else body.replaceChildren(...page.items.map(row));
      if (body.children.length === 0) body.append(h('tr', {}, h('td', { colSpan: columns.length, className: 'muted' }, 'No Tasks match.')));
      if (append || pages === 1) cursor = page.next_cursor;
      more.hidden = !cursor;
      document.getElementById('tasks-status').textContent =
        `${body.querySelectorAll('tr[data-task-id]').length} Tasks${cursor ? ' (more below)' : ''} · updated ${local(new Date().toISOString())}`;
    } catch (error) {
      if (!handleAuthError(error)) document.getElementById('tasks-status').textContent = error.message;
      return;
    }
    if (pages === 1) scheduleRefresh(() => load(true));
    else clearTimeout(refreshTimer);
  };
  more.addEventListener('click', () => load(false, true));
  await load();
}

/** Live views refresh while the page is visible; a refresh is marked as such and not audited. */
function scheduleRefresh(load) {
  clearTimeout(refreshTimer);
  // A form the person has begun to fill would be drawn anew, and their input lost: it waits until they send it.
  const idle = () => document.visibilityState === 'visible' && !document.querySelector('form.mcp-form[data-edited], form#steer[data-edited]');
  refreshTimer = setTimeout(() => (idle() ? load() : scheduleRefresh(load)), REFRESH_MS);
}

// ---- Task page --------------------------------------------------------------------------------

async function taskView(taskId) {
  setView(h('p', { className: 'muted', role: 'status' }, `Loading Task ${taskId}…`));
  // While the Task runs, its answer and steps stream into this section, kept across the page's re-reads.
  let live = null;
  window.addEventListener('hashchange', () => live?.stop(), { once: true });
  const load = async (refresh = false) => {
    let task;
    try {
      task = await api(`tasks/${encodeURIComponent(taskId)}`, { refresh });
    } catch (error) {
      if (!handleAuthError(error)) setView(h('p', {}, h('a', { href: '#/tasks' }, '← Tasks')), banner(error.message));
      return;
    }
    // The session's files live beside the Task; a failure there shows in their section, not instead of the Task.
    const files = await api(`sessions/${encodeURIComponent(task.session_id)}/files`, { refresh }).catch((error) => (handleAuthError(error) ? null : { error: error.message }));
    if (files === null) return;
    // A running Task has no end checkpoint yet: its diff shows once it has ended.
    const diff = ACTIVE.includes(task.status) ? null : await diffOf(task.task_id, refresh);
    const options = await consoleOptions().catch(() => ({ fork: false }));
    if (ACTIVE.includes(task.status) && !live) live = liveTask(task.task_id, () => load(true));
    if (!ACTIVE.includes(task.status)) live = null;
    const scroll = window.scrollY;
    setView(...taskPage(task, load, files, diff, live, options));
    window.scrollTo(0, scroll);
    if (ACTIVE.includes(task.status) || task.awaiting_approval) scheduleRefresh(() => load(true));
  };
  await load();
}

function taskPage(task, reload, files, diff, live, options) {
  const waited = between(task.created_at, task.started_at ?? (task.status === 'queued' ? new Date().toISOString() : null));
  const ran = between(task.started_at, task.finished_at ?? (ACTIVE.includes(task.status) ? new Date().toISOString() : null));
  const facts = h(
    'dl',
    { className: 'facts' },
    h('dt', {}, 'Status'),
    h(
      'dd',
      { id: 'task-status' },
      status(task),
      task.status === 'queued' && task.queue_position ? ` #${task.queue_position} in queue` : '',
      task.awaiting_approval ? ` (the Task itself: ${task.status})` : '',
    ),
    h('dt', {}, 'Owner'),
    h('dd', {}, task.owner),
    h('dt', {}, 'Surface'),
    h(
      'dd',
      { id: 'task-surface' },
      SURFACES[task.surface] ?? '—',
      task.started_by ? [' · ', h('a', { href: `#/${task.started_by.replace('/', 's/')}`, id: 'task-started-by' }, task.started_by)] : '',
    ),
    h('dt', {}, 'Session'),
    h('dd', { className: 'mono' }, h('a', { href: `#/tasks?session_id=${task.session_id}` }, task.session_id)),
    h('dt', {}, 'Queued'),
    h('dd', {}, clock(task.created_at)),
    h('dt', {}, 'Started'),
    h('dd', {}, task.started_at ? [clock(task.started_at), ` (waited ${duration(waited)})`] : waited !== null ? `not yet (waiting ${duration(waited)})` : '—'),
    h('dt', {}, 'Finished'),
    h('dd', {}, task.finished_at ? clock(task.finished_at) : '—'),
    h('dt', {}, 'Duration'),
    h('dd', { id: 'task-duration' }, ran !== null ? `${duration(ran)}${task.finished_at ? '' : ' so far'}` : '—'),
    h('dt', {}, 'Progress'),
    h('dd', { id: 'task-progress' }, progressOf(task)),
    h('dt', {}, 'Tokens'),
    h('dd', {}, `${task.token_usage.total} (${task.token_usage.input} in, ${task.token_usage.output} out)`),
    h('dt', {}, 'Attempt'),
    h('dd', {}, task.attempt),
    h('dt', {}, 'Trace'),
    h('dd', { id: 'task-trace', className: 'mono' }, task.trace_id ?? '—'),
  );
  const sections = [
    h(
      'div',
      { className: 'toolbar' },
      h('a', { href: '#/tasks' }, '← Tasks'),
      h('h2', { id: 'task-title', className: 'grow' }, `Task ${task.task_id}`),
      cancelButton(task, reload),
      h('a', { href: `#/audit?task_id=${task.task_id}` }, 'Audit events'),
    ),
    h('section', { className: 'card', 'aria-labelledby': 'h-request' }, h('h3', { id: 'h-request' }, 'Request'), h('p', { className: 'request' }, task.request)),
    ...[steerBox(task, reload)].filter(Boolean),
    h('section', { className: 'card' }, facts),
    live
      ? live.element
      : h(
          'section',
          { className: 'card', 'aria-labelledby': 'h-result' },
          h('h3', { id: 'h-result' }, 'Result'),
          task.result === null ? h('p', { className: 'muted' }, 'No result.') : markdown(task.result, { id: 'task-result' }),
        ),
  ];
  sections.push(listSection('Deliverables', task.deliverables, deliverableItem, 'deliverables'));
  sections.push(sessionFilesSection(files));
  if (diff !== null) sections.push(diffSection(diff, task, options));
  sections.push(listSection('Pending approvals', task.pending_approvals, (item) => approvalItem(item, reload), 'pending-approvals'));
  const answered = task.approvals.filter((item) => item.state !== 'pending');
  if (answered.length > 0) sections.push(listSection('Answered approvals', answered, answeredItem, 'answered-approvals'));
  sections.push(h('section', { 'aria-labelledby': 'h-trace' }, h('h3', { id: 'h-trace' }, `Trace (${task.trace.length} steps)`), timeline(task)));
  return sections;
}

function listSection(title, items, render, id) {
  return h(
    'section',
    { className: 'card', id },
    h('h3', {}, title),
    items.length === 0 ? h('p', { className: 'muted' }, 'None.') : h('ul', {}, ...items.map((item) => h('li', {}, render(item)))),
  );
}
/** A file the Task created, changed or (an undo) restored: downloadable as it is now. */
const deliverableItem = (item) => [
  h('button', { type: 'button', className: 'link mono', onclick: () => download(item) }, item.path),
  h('span', { className: 'muted' }, ` ${item.change}${item.bytes === null ? '' : `, ${item.bytes} bytes`} · ${item.mime_type}`),
];
/** The files the session's Tasks created or changed (newest first), each downloadable. */
function sessionFilesSection(files) {
  const title = h('h3', { id: 'h-files' }, 'Session files');
  if (files.error) return h('section', { className: 'card', 'aria-labelledby': 'h-files' }, title, banner(files.error));
  const rows = files.items.map((file) =>
    h(
      'li',
      {},
      h('button', { type: 'button', className: 'link mono', onclick: () => download(file) }, file.path),
      h('span', { className: 'muted' }, ` ${file.size} bytes · ${file.mime_type}`),
    ),
  );
  return h(
    'section',
    { className: 'card', id: 'session-files', 'aria-labelledby': 'h-files' },
    title,
    rows.length === 0 ? h('p', { className: 'muted' }, 'None.') : h('ul', {}, ...rows),
    files.next_cursor ? h('p', { className: 'muted' }, 'Only the 100 most recently changed files are shown.') : '',
  );
}

// ---- Task diff (workspace history) -------------------------------------------------------------

const DIFF_MODE_KEY = 'oam-diff-mode';

/** GET /admin/tasks/:id/diff as `{ text }`, or `{ error }` when it cannot be read; a refresh is marked as `api` marks it (not audited). */
async function diffOf(taskId, refresh = false) {
  const headers = { ...authHeaders(), ...(refresh ? { 'X-Console-Refresh': '1' } : {}) };
  const res = await fetch(`${BASE}/admin/tasks/${encodeURIComponent(taskId)}/diff`, { headers, credentials: 'same-origin' }).catch((error) => ({
    ok: false,
    status: 0,
    statusText: error.message,
  }));
  if (!res.ok) return { error: `${res.status} ${res.statusText}` };
  return { text: await res.text() };
}

/** `diff --git` sections: notes (# lines) before them, each file's header lines and its hunk lines. */
function parseDiff(text) {
  const notes = [];
  const files = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('diff --git ')) files.push({ title: line.slice('diff --git '.length), header: [], lines: [] });
    else if (files.length === 0) {
      if (line) notes.push(line);
    } else {
      const file = files[files.length - 1];
      if (file.lines.length === 0 && !line.startsWith('@@') && !line.startsWith('Binary files')) file.header.push(line);
      else if (line !== '' || file.lines.length > 0) file.lines.push(line);
    }
  }
  return { notes, files };
}

const lineClass = (line) =>
  line.startsWith('+') && !line.startsWith('+++') ? 'add' : line.startsWith('-') && !line.startsWith('---') ? 'del' : line.startsWith('@@') ? 'hunk' : '';

function inlineView(file) {
  return h('pre', { className: 'diff' }, ...file.lines.map((line) => h('span', { className: lineClass(line) }, `${line}\n`)));
}

/** Old on the left, new on the right: each run of removed lines beside the added lines that replace it. */
function sideBySideView(file) {
  const rows = [];
  let removed = [];
  let added = [];
  const flush = () => {
    for (let i = 0; i < Math.max(removed.length, added.length); i++) rows.push([removed[i] ?? null, added[i] ?? null]);
    removed = [];
    added = [];
  };
  for (const line of file.lines) {
    const kind = lineClass(line);
    if (kind === 'del') removed.push(line);
    else if (kind === 'add') added.push(line);
    else {
      flush();
      rows.push([line, line]);
    }
  }
  flush();
  const cell = (line) => h('td', { className: `mono ${line === null ? '' : lineClass(line)}` }, line === null ? '' : line.startsWith('@@') ? line : line.slice(1));
  return h('table', { className: 'diff-sbs' }, h('tbody', {}, ...rows.map(([left, right]) => h('tr', {}, cell(left), cell(right)))));
}

/** What a file's header says beyond its name (new, deleted, mode, rename), shown beside it when folded. */
function fileFacts(file) {
  const facts = file.header.filter((line) => !/^(index |--- |\+\+\+ )/.test(line));
  return facts.length > 0 ? h('span', { className: 'muted' }, ` · ${facts.join(' · ')}`) : '';
}

/**
 * Undo (a new Task of the session) and fork (a new session from this Task's end), for the session's owner: the
 * API answers anyone else as if the session did not exist, and the message says so.
 */
function historyButtons(task, changed, options) {
  // Undo and fork act on the caller's own sessions: offered to their owner only, and Fork only where it works.
  if (ACTIVE.includes(task.status) || task.owner !== signedIn?.user) return [];
  const act = (label, path, done) =>
    h(
      'button',
      {
        type: 'button',
        onclick: async (event) => {
          if (!confirm(`${label} (Task ${short(task.task_id)})?`)) return;
          event.target.disabled = true;
          try {
            done(await api(path, { method: 'POST' }));
          } catch (error) {
            if (!handleAuthError(error)) alert(`${label} failed: ${error.message}`);
            event.target.disabled = false;
          }
        },
      },
      `${label}…`,
    );
  const query = `task_id=${encodeURIComponent(task.task_id)}`;
  const session = `sessions/${encodeURIComponent(task.session_id)}`;
  return [
    changed
      ? act('Undo', `${session}/undo?${query}`, (queued) => {
          location.hash = `#/tasks/${queued.task_id}`;
        })
      : '',
    options.fork
      ? act('Fork', `${session}/fork?${query}`, (forked) => {
          location.hash = `#/chat?session=${forked.session_id}`;
        })
      : '',
  ];
}

/** The Task's diff, one foldable block per file, inline or side by side (the choice is remembered). */
function diffSection(diff, task, options) {
  const title = h('h3', { id: 'h-diff' }, 'Changes (diff)');
  if (diff.error) return h('section', { className: 'card', id: 'task-diff', 'aria-labelledby': 'h-diff' }, title, h('p', { className: 'muted' }, `No diff: ${diff.error}`));
  const { notes, files } = parseDiff(diff.text);
  const mode = sessionStorage.getItem(DIFF_MODE_KEY) === 'side' ? 'side' : 'inline';
  const body = h('div', { id: 'diff-files' });
  const render = (chosen) => {
    body.replaceChildren(
      ...files.map((file) =>
        h(
          'details',
          { className: 'diff-file', open: true },
          h('summary', { className: 'mono' }, file.title.replace(/^a\/(.*) b\/\1$/, '$1'), fileFacts(file)),
          chosen === 'side' ? sideBySideView(file) : inlineView(file),
        ),
      ),
    );
  };
  const toggle = h(
    'button',
    {
      type: 'button',
      id: 'diff-mode',
      onclick: () => {
        const next = sessionStorage.getItem(DIFF_MODE_KEY) === 'side' ? 'inline' : 'side';
        sessionStorage.setItem(DIFF_MODE_KEY, next);
        toggle.textContent = next === 'side' ? 'Inline' : 'Side by side';
        render(next);
      },
    },
    mode === 'side' ? 'Inline' : 'Side by side',
  );
  render(mode);
  return h(
    'section',
    { className: 'card', id: 'task-diff', 'aria-labelledby': 'h-diff' },
    h('div', { className: 'toolbar' }, h('div', { className: 'grow' }, title), files.length > 0 ? toggle : '', ...historyButtons(task, files.length > 0, options)),
    ...notes.map((note) => h('p', { className: 'muted' }, note.replace(/^# /, ''))),
    files.length === 0 ? h('p', { className: 'muted' }, 'No file changed.') : body,
  );
}

/** A deliverable or session file, by its `download_path`: fetched with the same credentials as every API call (a plain link could not carry the admin token). */
async function download(file) {
  const res = await fetch(`${BASE}${file.download_path}`, { headers: authHeaders(), credentials: 'same-origin' });
  if (!res.ok) return void alert(`Download failed: ${res.status} ${(await res.json().catch(() => ({}))).message ?? res.statusText}`);
  const url = URL.createObjectURL(await res.blob());
  h('a', { href: url, download: file.path.split('/').pop() }).click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** A pending question of the agent (ask_user): its text and numbered options, all as text; its owner picks one here. */
const questionItem = (item, after) => [
  h('span', { className: 'question' }, `The agent asks: ${item.question}`),
  h('ol', { className: 'options' }, ...item.options.map((option) => h('li', {}, option))),
  h(
    'span',
    { className: 'muted' },
    ` · ${item.waiting_in_place ? 'the Task waits for your answer' : 'waiting for your answer; the conversation continues once it is given'} · asked `,
    clock(item.created_at),
  ),
  choiceButtons(item, after),
];

/** The action an approval is about: the command, another server's form (who asks and what), the file's tool and path, or the MCP server's tool. */
const actionText = (item) =>
  item.command !== undefined
    ? `$ ${item.command}`
    : item.mcp_form !== undefined
      ? `The MCP server ${item.server} asks (tool ${item.mcp_tool}): ${item.mcp_form}`
      : `${item.tool} ${item.path ?? item.mcp_tool}`;

/** A pending approval: the command, or the path with its diff; its owner answers it here. */
const approvalItem = (item, after) =>
  item.question !== undefined
    ? questionItem(item, after)
    : [
        h('span', { className: 'mono' }, actionText(item)),
        h(
          'span',
          { className: 'muted' },
          ` · ${item.waiting_in_place ? 'the Task waits for your decision' : 'waiting for your decision; the conversation continues once it is made'} · requested `,
          clock(item.created_at),
        ),
        item.diff ? h('pre', { className: 'output' }, item.diff) : '',
        answerButtons(item, after),
      ];

const ANSWERED = { granted: 'approved', denied: 'denied', dropped: 'dropped: a new instruction instead', cancelled: 'cancelled with its Task' };
/** What an answered approval or question asked, its answer, who gave it, how and when. */
const answeredItem = (item) => [
  h('span', { className: 'mono' }, item.question !== undefined ? `The agent asked: ${item.question}` : actionText(item)),
  h(
    'span',
    { className: `answer-state ${item.state}` },
    ` · ${item.question !== undefined && item.state === 'granted' ? `answered: ${item.reason}` : (ANSWERED[item.state] ?? item.state)}`,
  ),
  h(
    'span',
    { className: 'muted' },
    item.answered_by ? ` · by ${item.answered_by}${item.answered_via === 'in_place' ? ' (in place)' : item.answered_via === 'conversation' ? ' (in the conversation)' : ''}` : '',
    item.answered_at ? [' · ', clock(item.answered_at)] : '',
    item.question === undefined && item.reason ? ` · ${item.reason}` : '',
  ),
  ...(item.answer_task_id ? [' · ', h('a', { href: `#/tasks/${item.answer_task_id}`, className: 'mono', title: item.answer_task_id }, `Task ${short(item.answer_task_id)}`)] : []),
];

/** A click handler that posts one answer to a pending approval or question (its buttons disabled meanwhile), then `after`. */
function postAnswer(item, action, after) {
  return async (event) => {
    for (const button of event.target.parentElement.querySelectorAll('button')) button.disabled = true;
    try {
      await api(`approvals/${encodeURIComponent(item.approval_id)}/${action}`, { method: 'POST' });
    } catch (error) {
      if (!handleAuthError(error)) alert(`Answer failed: ${error.message}`);
    }
    after();
  };
}

/** One button per option for the question's owner (an admin sees others' but does not answer for them). */
function choiceButtons(item, after) {
  if (!signedIn || item.owner !== signedIn.user) return null;
  const choose = (number) => postAnswer(item, `choices/${number}`, after);
  return h(
    'div',
    { className: 'answer' },
    ...item.options.map((option, index) => h('button', { type: 'button', className: 'choice', onclick: choose(index + 1) }, `${index + 1}. ${option}`)),
  );
}

/** Approve / Deny for the approval's owner (an admin sees others' but does not answer for them). */
function answerButtons(item, after) {
  if (!signedIn || item.owner !== signedIn.user) return null;
  const answer = (decision) => postAnswer(item, decision, after);
  if (item.mcp_form !== undefined) return formAnswer(item, after);
  return h(
    'div',
    { className: 'answer' },
    h('button', { type: 'button', className: 'primary approve', onclick: answer('approve') }, 'Approve'),
    h('button', { type: 'button', className: 'danger deny', onclick: answer('deny') }, 'Deny'),
  );
}

/** Where a string field's format has an input type of its own (date-time stays text: RFC 3339, not the browser's local time). */
const FORMAT_INPUT = { email: 'email', uri: 'url', date: 'date' };

/** One field of a server's form as inputs, and how to read its value back (undefined: left empty, not sent). */
function formField(key, field, required) {
  const name = `form-${key}`;
  if (field.type === 'boolean') {
    const input = h('input', { type: 'checkbox', name, checked: field.default === true });
    return { inputs: [input], value: () => input.checked };
  }
  if (field.type === 'array') {
    const boxes = field.items.anyOf.map((choice) => ({
      choice,
      input: h('input', { type: 'checkbox', name, value: choice.const, checked: (field.default ?? []).includes(choice.const) }),
    }));
    const value = () => boxes.filter((box) => box.input.checked).map((box) => box.choice.const);
    return {
      inputs: boxes.map(({ choice, input }) => h('span', { className: 'choice-box' }, input, ` ${choice.title}`)),
      value: () => (value().length === 0 && !required ? undefined : value()),
    };
  }
  if (field.oneOf) {
    const options = [
      ...(required ? [] : [h('option', { value: '' }, '—')]),
      ...field.oneOf.map((choice) => h('option', { value: choice.const, selected: choice.const === field.default }, choice.title)),
    ];
    const input = h('select', { name, required }, ...options);
    return { inputs: [input], value: () => input.value || undefined };
  }
  if (field.type === 'number' || field.type === 'integer') {
    const input = h('input', { type: 'number', name, required, min: field.minimum, max: field.maximum, step: field.type === 'integer' ? '1' : 'any', value: field.default ?? '' });
    return { inputs: [input], value: () => (input.value === '' ? undefined : Number(input.value)) };
  }
  const input = h('input', { type: FORMAT_INPUT[field.format] ?? 'text', name, required, minLength: field.minLength, maxLength: field.maxLength, value: field.default ?? '' });
  return { inputs: [input], value: () => (input.value === '' ? undefined : input.value) };
}

/**
 * Another server's form, for its owner to fill (its fields from the stored schema) or decline. The content
 * goes as tasks/update's would, and the service checks it the same way: its refusal says which field is wrong.
 */
function formAnswer(item, after) {
  const fields = Object.entries(item.form_schema.properties).map(([key, field]) => ({ key, field, ...formField(key, field, item.form_schema.required.includes(key)) }));
  const problem = h('p', { className: 'error-text form-problem', role: 'alert', hidden: true });
  const send = async (event) => {
    event.preventDefault();
    const content = Object.fromEntries(fields.map(({ key, value }) => [key, value()]).filter(([, value]) => value !== undefined));
    for (const button of form.querySelectorAll('button')) button.disabled = true;
    try {
      await api(`approvals/${encodeURIComponent(item.approval_id)}/form?content=${encodeURIComponent(JSON.stringify(content))}`, { method: 'POST' });
      delete form.dataset.edited;
      after();
    } catch (error) {
      for (const button of form.querySelectorAll('button')) button.disabled = false;
      if (!handleAuthError(error)) Object.assign(problem, { hidden: false, textContent: `Not sent: ${error.message}` });
    }
  };
  const form = h(
    'form',
    { className: 'mcp-form', oninput: () => (form.dataset.edited = '1'), onsubmit: send },
    ...fields.map(({ key, field, inputs }) =>
      h(
        'label',
        { dataset: { field: key } },
        `${field.title ?? key}${item.form_schema.required.includes(key) ? ' *' : ''}`,
        ...inputs,
        field.description ? h('span', { className: 'muted' }, field.description) : '',
      ),
    ),
    problem,
    h(
      'div',
      { className: 'answer' },
      h('button', { type: 'submit', className: 'primary send-form' }, `Send to ${item.server}`),
      h('button', { type: 'button', className: 'danger deny', onclick: postAnswer(item, 'deny', after) }, 'Decline'),
    ),
  );
  return form;
}

/** The trace as a timeline: one entry per step, numbered from 1, grouped under the subtask it served. */
function timeline(task) {
  if (task.trace.length === 0) return h('p', { className: 'muted' }, ACTIVE.includes(task.status) ? 'No steps yet.' : 'No steps were recorded.');
  const titles = new Map();
  for (const step of task.trace)
    if (step.kind === 'plan' && Array.isArray(step.detail?.subtasks)) for (const subtask of step.detail.subtasks) titles.set(subtask.id, subtask.title);
  const origin = Date.parse(task.started_at ?? task.trace[0].started_at);
  const items = [];
  let group = null;
  task.trace.forEach((step, index) => {
    if (step.subtask && step.subtask !== group)
      items.push(h('li', { className: 'subtask-group', role: 'presentation' }, `Subtask ${step.subtask}: ${titles.get(step.subtask) ?? ''}`));
    group = step.subtask || group;
    const offset = Date.parse(step.started_at) - origin;
    // A plan the model could not give is not a failure of the Task: it is told and goes on without one (the fallback).
    const fallback = step.kind === 'plan' && Boolean(step.detail?.fallback ?? (step.outcome === 'error' && step.detail?.error));
    items.push(
      h(
        'li',
        { className: `kind-${step.kind}${step.outcome === 'ok' || fallback ? '' : ' bad'}${fallback ? ' fallback' : ''}`, dataset: { step: index + 1, kind: step.kind } },
        h(
          'div',
          { className: 'step-head' },
          h('span', { className: 'step-no' }, `#${index + 1}`),
          h('span', { className: 'step-kind' }, step.kind.replace('_', ' ')),
          h('span', { className: 'step-name' }, step.kind === 'command' ? `$ ${step.name}` : step.name),
          fallback ? h('span', { className: 'fallback-text' }, 'fallback: no plan') : step.outcome === 'ok' ? null : h('span', { className: 'error-text' }, step.outcome),
          h(
            'span',
            { className: 'step-time' },
            h('time', { dateTime: step.started_at, title: utc(step.started_at) }, local(step.started_at, true).slice(11)),
            ` (+${duration(Math.max(0, offset))}) · took ${duration(step.duration_ms)}`,
          ),
        ),
        ...stepBody(step),
      ),
    );
  });
  return h('ol', { className: 'timeline', id: 'trace' }, ...items);
}

function stepBody(step) {
  const d = step.detail ?? {};
  switch (step.kind) {
    case 'plan':
      if (Array.isArray(d.subtasks))
        return [
          h(
            'ol',
            { className: 'plan' },
            ...d.subtasks.map((s) =>
              h(
                'li',
                {},
                h('strong', {}, `${s.id}: ${s.title}`),
                s.dependsOn?.length ? h('span', { className: 'muted' }, ` (after ${s.dependsOn.join(', ')})`) : null,
                s.instructions ? h('div', { className: 'muted' }, s.instructions) : null,
              ),
            ),
          ),
        ];
      if (d.mode === 'direct')
        return [
          h(
            'p',
            { className: 'muted' },
            d.fallback ? `The model's plan could not be read (${d.fallback}), so the Task went on directly, without a plan.` : 'Answered directly, without a plan.',
          ),
        ];
      if (d.error) return [h('p', { className: 'muted' }, `The model's plan could not be used (${d.error}); it was told so, and went on without one or planned again.`)];
      return d.notes ? [h('p', { className: 'muted' }, String(d.notes))] : [];
    case 'model_call':
      return [
        h(
          'div',
          { className: 'muted' },
          `${step.input_tokens} tokens in, ${step.output_tokens} out${d.doneReason ? ` · ${d.doneReason}` : ''}${d.toolCalls?.length ? ` · asked for ${d.toolCalls.join(', ')}` : ''}`,
        ),
        // The planning call's answer is the plan itself, shown as a list by the plan step.
        d.content && step.name !== 'plan' ? h('pre', {}, d.content) : null,
        d.error ? h('pre', { className: 'error-text' }, String(d.error)) : null,
      ];
    case 'command':
      return [
        h(
          'div',
          { className: 'muted' },
          `exit code ${d.exitCode ?? '?'}${d.timedOut ? ' · timed out' : ''}${d.sandbox ? ` · sandbox ${d.sandbox}` : ''}${d.droppedBytes ? ` · ${d.droppedBytes} bytes not captured` : ''}`,
        ),
        h('pre', { className: 'output' }, d.output ? String(d.output).trimEnd() : '(no output)'),
      ];
    case 'tool_call':
    case 'mcp_tool':
    case 'file_op': {
      const args = d.arguments && typeof d.arguments === 'object' ? Object.entries(d.arguments) : [];
      return [
        step.kind === 'mcp_tool' ? h('div', { className: 'muted' }, `MCP server ${d.server} · tool ${d.tool}`) : null,
        args.length ? h('div', { className: 'mono' }, args.map(([k, v]) => `${k}: ${clip(typeof v === 'string' ? v : JSON.stringify(v), 200)}`).join(' · ')) : null,
        d.path ? h('div', { className: 'file-change' }, fileChange(d)) : null,
        d.error ? h('div', { className: 'error-text' }, d.error) : null,
      ];
    }
    default:
      return [h('pre', {}, JSON.stringify(d, null, 2))];
  }
}

/** A file step's change: an undo's restore names the Task it undid; a size only where the step measured one. */
function fileChange(d) {
  if (d.undoOf) return `restored ${d.path} as it was before Task ${short(d.undoOf)}`;
  return `${d.created ? 'created' : 'changed'} ${d.path}${typeof d.bytes === 'number' ? ` (${d.bytes} bytes)` : ''}`;
}

// ---- Audit view -------------------------------------------------------------------------------

async function auditView(params) {
  const field = (name, label, props = {}) => h('label', {}, label, h('input', { name, ...props }));
  const form = h(
    'form',
    { className: 'filters card', id: 'filters', role: 'search' },
    field('actor', 'actor'),
    field('action', 'action (prefix)', { placeholder: 'agent_run, auth, task.status' }),
    h('label', {}, 'outcome', h('select', { name: 'outcome' }, h('option', { value: '' }, 'any'), ...['ok', 'rejected', 'error'].map((o) => h('option', {}, o)))),
    field('task_id', 'task id', { size: 36 }),
    field('session_id', 'session id', { size: 36 }),
    field('from', `from (${ZONE})`, { type: 'datetime-local' }),
    field('to', 'to', { type: 'datetime-local' }),
    h('label', {}, 'page size', h('select', { name: 'limit' }, ...['25', '50', '100'].map((n) => h('option', { selected: n === '50' }, n)))),
    h('button', { type: 'submit', className: 'primary' }, 'Search'),
    h('span', { id: 'status', role: 'status', className: 'muted' }),
  );
  for (const [key, value] of params) if (form.elements[key]) form.elements[key].value = key === 'from' || key === 'to' ? fieldTime(value) : value;
  const verify = h('span', { id: 'verify', role: 'status' });
  const body = h('tbody', { id: 'events' });
  const more = h('button', { id: 'more', type: 'button', hidden: true }, 'Older events');
  setView(
    h(
      'div',
      { className: 'toolbar' },
      h('h2', { className: 'grow' }, 'Audit log'),
      verify,
      h('button', { id: 'verify-button', type: 'button', onclick: verifyChain }, 'Verify chain'),
    ),
    form,
    h(
      'div',
      { className: 'card scroll' },
      h('table', {}, h('thead', {}, h('tr', {}, ...['seq', 'at', 'actor', 'source', 'action', 'outcome', 'task', 'detail'].map((c) => h('th', { scope: 'col' }, c)))), body),
      more,
    ),
  );
  let cursor = null;
  const search = async (append) => {
    const query = new URLSearchParams();
    for (const [key, value] of new FormData(form)) if (value) query.set(key, key === 'from' || key === 'to' ? instant(String(value)) : String(value));
    if (append && cursor) query.set('cursor', cursor);
    document.getElementById('status').textContent = 'loading…';
    try {
      const page = await api(`audit?${query}`);
      if (!append) body.replaceChildren();
      for (const event of page.items) {
        body.append(
          h(
            'tr',
            { dataset: { seq: event.seq } },
            h('td', {}, event.seq),
            h('td', { className: 'mono' }, clock(event.at)),
            h('td', {}, event.actor),
            h('td', {}, event.source),
            h('td', {}, event.action),
            h('td', { className: `outcome-${event.outcome}` }, event.outcome),
            h('td', { className: 'mono' }, event.task_id ? h('a', { className: 'task', href: `#/tasks/${event.task_id}`, title: event.task_id }, short(event.task_id)) : ''),
            h('td', { className: 'detail mono' }, JSON.stringify(event.detail)),
          ),
        );
      }
      cursor = page.next_cursor;
      more.hidden = !cursor;
      document.getElementById('status').textContent = `${body.children.length} events`;
    } catch (error) {
      if (!handleAuthError(error)) document.getElementById('status').textContent = error.message;
    }
  };
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    search(false);
  });
  more.addEventListener('click', () => search(true));
  await search(false);
}

async function verifyChain() {
  const out = document.getElementById('verify');
  out.textContent = 'verifying…';
  try {
    const result = await api('audit/verify');
    out.className = result.ok ? 'ok' : 'error-text';
    out.textContent = result.ok ? `chain ok (${result.checked} events, head ${result.head.seq})` : `broken at seq ${result.first_bad_seq}: ${result.reason}`;
  } catch (error) {
    out.textContent = error.message;
  }
}

// ---- sign-in ----------------------------------------------------------------------------------

/** A 401/403 from any view sends the admin back to sign-in (mode none) or explains the refusal (proxy modes). */
function handleAuthError(error) {
  if (!(error instanceof ApiError) || (error.status !== 401 && error.status !== 403)) return false;
  signedIn = null;
  if (AUTH_MODE === 'none') {
    sessionStorage.removeItem(TOKEN_KEY);
    signInView(error.message);
  } else if (AUTH_MODE === 'oauth') {
    oauthSignInView(error.status === 403 ? `Signed in, but not as an admin (${error.message}).` : null);
  } else {
    setView(banner(`The console refused your identity (${error.message}). Sign in again through the SSO proxy; the audit log and usage are for members of auth.admin_groups.`));
  }
  updateHeader();
  return true;
}

function signInView(problem) {
  const input = h('input', { id: 'token', type: 'password', name: 'token', autocomplete: 'current-password', required: true, size: 40 });
  const form = h(
    'form',
    { id: 'sign-in' },
    h('label', {}, 'Admin token: open the sign-in URL from the start-up log ("admin sign-in: open …"), or paste auth.admin_token', input),
    h('div', {}, h('button', { type: 'submit', className: 'primary' }, 'Sign in')),
    problem ? banner(problem) : null,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, input.value);
    if (await signIn()) route();
  });
  setView(
    h(
      'section',
      { className: 'card sign-in' },
      h('h2', {}, 'Sign in'),
      h('p', { className: 'muted' }, 'With auth.mode none the console is opened with the admin token; it stays in this browser tab only.'),
      form,
    ),
  );
  input.focus();
}

/**
 * The sign-in URL of the start-up log (`/admin#token=…`): the token moves into this tab's storage and
 * out of the address bar and its history entry (a fragment never reaches the server or its logs).
 */
function tokenFromAddress() {
  const match = /^#token=([A-Za-z0-9_~.%-]+)$/.exec(location.hash);
  if (!match) return;
  if (AUTH_MODE === 'none') sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(match[1]));
  history.replaceState(null, '', `${location.pathname}${location.search}#/tasks`);
}

/** auth.mode oauth: the sign-in happens at the organisation's identity provider (authorization code with PKCE). */
function oauthSignInView(problem) {
  const link = h('a', { id: 'oauth-sign-in', className: 'button primary', href: `${BASE}/admin/oauth/login` }, 'Sign in with your organisation account');
  const other = problem ? h('button', { type: 'button', onclick: () => oauthSignOut() }, 'Sign in as someone else') : null;
  setView(h('section', { className: 'card sign-in' }, h('h2', {}, 'Sign in'), problem ? banner(problem) : null, h('div', {}, link, ' ', other)));
}

/** Ends the session here (the cookie), then at the identity provider when it has an end-session page. */
async function oauthSignOut() {
  const res = await fetch(`${BASE}/admin/oauth/logout`, { method: 'POST', credentials: 'same-origin' });
  const body = await res.json().catch(() => ({}));
  location.assign(body.redirect ?? `${BASE}/admin`);
}

async function signIn() {
  try {
    signedIn = await api('me');
  } catch (error) {
    if (!handleAuthError(error)) setView(banner(error.message));
    return false;
  }
  updateHeader();
  return true;
}

function updateHeader() {
  const admin = Boolean(signedIn?.admin);
  document.getElementById('whoami').textContent = signedIn ? `signed in as ${signedIn.user}${AUTH_MODE === 'none' ? ' (admin token)' : admin ? ' (admin)' : ''}` : '';
  document.getElementById('sign-out').hidden = !(signedIn && (AUTH_MODE === 'none' || AUTH_MODE === 'oauth'));
  document.getElementById('nav-audit').hidden = !admin;
  document.getElementById('nav-models').hidden = !admin;
  document.getElementById('nav-usage').hidden = !signedIn;
  document.getElementById('nav-tasks').textContent = signedIn && !admin ? 'My Tasks' : 'Tasks';
  if (signedIn) refreshApprovalBadge();
}

// ---- routing ----------------------------------------------------------------------------------

function route() {
  if (!signedIn) {
    // No request before a token is tried: nothing to refuse, nothing to audit.
    if (AUTH_MODE === 'none' && !sessionStorage.getItem(TOKEN_KEY)) return signInView();
    return signIn().then((ok) => ok && route());
  }
  const [path, search = ''] = location.hash.replace(/^#/, '').split('?');
  const params = new URLSearchParams(search);
  const parts = path.split('/').filter(Boolean);
  for (const link of document.querySelectorAll('header nav a')) link.removeAttribute('aria-current');
  const views = {
    audit: signedIn.admin && auditView,
    models: signedIn.admin && modelsView,
    usage: usageView,
    approvals: approvalsView,
    skills: skillsView,
    schedules: schedulesView,
    triggers: triggersView,
    chat: chatView,
  };
  if (views[parts[0]]) {
    document.getElementById(`nav-${parts[0]}`).setAttribute('aria-current', 'page');
    return views[parts[0]](params, parts[1] && decodeURIComponent(parts[1]));
  }
  document.getElementById('nav-tasks').setAttribute('aria-current', 'page');
  if (parts[0] === 'tasks' && parts[1]) return taskView(decodeURIComponent(parts[1]));
  return tasksView(params);
}

document.getElementById('sign-out').addEventListener('click', () => {
  if (AUTH_MODE === 'oauth') return void oauthSignOut();
  sessionStorage.removeItem(TOKEN_KEY);
  signedIn = null;
  updateHeader();
  signInView();
});
window.addEventListener('hashchange', () => {
  route();
  document.getElementById('view').focus();
});
tokenFromAddress();
route();
