// The conversation view (#/chat, #/chat?session=<id>) and the live follow of a running Task, on console.js's
// helpers (h, api, setView…), which load after this file and are only called from here once the page runs.
// A request typed here is a Chat API request (POST /admin/conversation), and a Task is followed with the Chat
// stream's own chunks (GET /admin/tasks/<id>/stream). Answers render as Markdown through marked and DOMPurify
// (served from their npm packages); every other value goes in as text.
/* global api, h, setView, signedIn, short, clip, banner, handleAuthError, approvalItem, authHeaders, ApiError, BASE, ACTIVE, status, marked, DOMPurify */
/* exported chatView, liveTask, markdown, consoleOptions */
'use strict';

let optionsRead = null;
/** What the conversation view may offer here (the model tiers, whether Fork works), read once per page. */
function consoleOptions() {
  optionsRead ??= api('conversation/options').catch((error) => {
    optionsRead = null;
    throw error;
  });
  return optionsRead;
}

// A link in an answer opens in a new tab and tells the other site nothing about this page.
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('rel', 'noopener noreferrer');
    node.setAttribute('target', '_blank');
  }
});

/** An answer as Markdown: marked's HTML, sanitised by DOMPurify before it is markup (the only innerHTML of the console). */
function markdown(text, props = {}) {
  const box = h('div', { ...props, className: `markdown ${props.className ?? ''}`.trim() });
  box.innerHTML = DOMPurify.sanitize(marked.parse(text, { async: false, gfm: true })).trim();
  return box;
}

/** Calls `on` with each chunk of a Task's stream until it ends (data: [DONE]) or `signal` aborts. */
async function followTask(taskId, on, signal) {
  const res = await fetch(`${BASE}/admin/tasks/${encodeURIComponent(taskId)}/stream`, { headers: authHeaders(), credentials: 'same-origin', signal });
  if (!res.ok) throw new ApiError(res.status, (await res.json().catch(() => ({}))).message ?? res.statusText);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const data = buffer
        .slice(0, end)
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice('data: '.length))
        .join('\n');
      buffer = buffer.slice(end + 2);
      // A `: keep-alive` comment carries no data.
      if (data === '[DONE]') return;
      if (data) on(JSON.parse(data));
    }
  }
}

/** One step of the stream (`delta.agent_steps`) as a line: what it was, its outcome, a command's exit code, a file's size. */
function stepLine(step) {
  const facts = [
    step.exit_code !== undefined && step.exit_code !== null ? `exit code ${step.exit_code}` : '',
    step.path ? `${step.created ? 'created' : 'changed'} ${step.path}${typeof step.bytes === 'number' ? ` (${step.bytes} bytes)` : ''}` : '',
    step.type === 'subtask' && step.total_tasks ? `${step.completed_tasks}/${step.total_tasks}` : '',
  ].filter(Boolean);
  return h(
    'li',
    { className: `kind-${step.type}${step.status === 'ok' || step.type === 'subtask' ? '' : ' bad'}`, dataset: { kind: step.type } },
    h('span', { className: 'step-kind' }, step.type.replace('_', ' ')),
    ' ',
    h('span', { className: 'step-name' }, step.type === 'command' ? `$ ${step.name}` : step.name),
    facts.length ? h('span', { className: 'muted' }, ` · ${facts.join(' · ')}`) : '',
    step.status !== 'ok' && step.type !== 'subtask' ? h('span', { className: 'error-text' }, ` ${step.status}`) : '',
  );
}

/**
 * A running Task, live: its status, its steps as they are written and its answer as the model writes it.
 * `ended(last)` is called with the stream's last chunk (null when it broke off) once the Task has ended,
 * `moved()` when its status, subtask or steps changed (it may then wait for a person, in place).
 */
function liveTask(taskId, ended, moved = () => undefined) {
  const badge = h('span', { className: 'status queued' }, 'queued');
  const steps = h('ol', { className: 'live-steps', id: 'live-steps' });
  const answer = h('div', { className: 'live-answer', id: 'live-answer', 'aria-busy': 'true' }, h('p', { className: 'muted' }, 'Waiting for the answer…'));
  const problem = h('p', { className: 'error-text', role: 'alert', hidden: true });
  const element = h(
    'section',
    { className: 'card live', id: 'live-task', dataset: { taskId }, 'aria-labelledby': 'h-live' },
    h('div', { className: 'toolbar' }, h('h3', { id: 'h-live', className: 'grow' }, 'Answer (live)'), badge),
    answer,
    problem,
    h('details', { className: 'live-steps-box', open: true }, h('summary', {}, 'Steps'), steps),
  );
  const controller = new AbortController();
  let text = '';
  let last = null;
  let drawn = false;
  // Drawn at most once a frame: an answer arrives a few characters at a time.
  const draw = () => {
    if (drawn) return;
    drawn = true;
    requestAnimationFrame(() => {
      drawn = false;
      answer.replaceChildren(markdown(text));
    });
  };
  followTask(
    taskId,
    (chunk) => {
      const choice = chunk.choices?.[0] ?? {};
      const delta = choice.delta ?? {};
      if (delta.agent) Object.assign(badge, { className: `status ${delta.agent.status}`, textContent: delta.agent.status.replace('_', ' ') });
      for (const step of delta.agent_steps ?? []) steps.append(stepLine(step));
      if (delta.agent || delta.agent_steps?.length) moved();
      if (typeof delta.content === 'string') {
        text = (delta.agent_answer_offset === undefined ? text : text.slice(0, delta.agent_answer_offset)) + delta.content;
        draw();
      }
      if (choice.finish_reason) last = chunk;
    },
    controller.signal,
  ).then(
    () => {
      answer.removeAttribute('aria-busy');
      ended(last);
    },
    (error) => {
      if (controller.signal.aborted) return;
      if (!handleAuthError(error)) Object.assign(problem, { hidden: false, textContent: `The live view stopped: ${error.message}` });
      ended(null);
    },
  );
  return { element, stop: () => controller.abort() };
}

// ---- the conversation view ----------------------------------------------------------------------

/** The caller's own conversations (sessions), newest first, from their newest Tasks: the id and the first request seen. */
async function ownConversations() {
  const query = new URLSearchParams({ limit: '100', ...(signedIn.admin ? { owner: signedIn.user } : {}) });
  const { items } = await api(`tasks?${query}`);
  const sessions = new Map();
  for (const task of items) sessions.set(task.session_id, { id: task.session_id, title: task.request, at: sessions.get(task.session_id)?.at ?? task.created_at });
  return [...sessions.values()];
}

/** A file the person attached, as the Chat API takes it: an image part, or a file part (data URL). */
function partOf(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onerror = () => reject(new Error(`${file.name}: ${reader.error?.message ?? 'could not be read'}`));
    reader.onload = () => {
      const url = reader.result;
      resolve(file.type.startsWith('image/') ? { type: 'image_url', image_url: { url } } : { type: 'file', file: { filename: file.name, file_data: url } });
    };
    reader.readAsDataURL(file);
  });
}

/** One earlier turn: the request as text, the answer as Markdown, the Task it was, and what it waits for. */
function turnItem(task, pending, options, after, last) {
  const actions = [];
  if (last && !ACTIVE.includes(task.status) && task.owner === signedIn.user) {
    actions.push(h('button', { type: 'button', className: 'link undo-last', title: 'Put back the files this turn changed', onclick: () => after({ undo: task }) }, 'Undo'));
  }
  if (!ACTIVE.includes(task.status) && options.fork && task.owner === signedIn.user) {
    actions.push(
      h(
        'button',
        { type: 'button', className: 'link fork-here', title: 'Continue from this turn in a new conversation', onclick: () => after({ forkFrom: task.task_id }) },
        'Fork from here',
      ),
    );
  }
  return h(
    'li',
    { className: 'turn', dataset: { taskId: task.task_id } },
    h('div', { className: 'turn-request' }, h('p', { className: 'request' }, task.request)),
    h(
      'div',
      { className: 'turn-answer' },
      h(
        'div',
        { className: 'turn-head' },
        status(task),
        ' ',
        h('a', { href: `#/tasks/${task.task_id}`, className: 'mono', title: task.task_id }, `Task ${short(task.task_id)}`),
        ' ',
        ...actions,
      ),
      task.result === null ? h('p', { className: 'muted' }, ACTIVE.includes(task.status) ? 'Running…' : 'No answer.') : markdown(task.result),
      ...pending.map((item) => h('div', { className: 'pending-here', dataset: { approvalId: item.approval_id } }, ...approvalItem(item, after))),
    ),
  );
}

async function chatView(params) {
  let options;
  let conversations;
  try {
    [options, conversations] = await Promise.all([consoleOptions(), ownConversations()]);
  } catch (error) {
    if (!handleAuthError(error)) setView(banner(error.message));
    return;
  }
  let sessionId = params.get('session') || null;
  let forkFrom = null;
  let live = null;
  const picker = h(
    'select',
    { id: 'conversation', name: 'conversation', onchange: () => (location.hash = picker.value ? `#/chat?session=${picker.value}` : '#/chat') },
    h('option', { value: '' }, 'New conversation'),
    ...conversations.map((c) => h('option', { value: c.id, selected: c.id === sessionId }, clip(c.title.replace(/\s+/g, ' '), 60))),
  );
  const turns = h('ol', { className: 'turns', id: 'turns' });
  const note = h('p', { className: 'muted', id: 'conversation-note', role: 'status' });
  const prompt = h('textarea', {
    id: 'prompt',
    name: 'prompt',
    rows: 3,
    required: true,
    placeholder: 'Ask for something (Enter sends, Shift+Enter is a new line)',
    'aria-label': 'Request',
  });
  const mode = h('select', { name: 'mode', id: 'mode' }, h('option', { value: 'agent' }, 'Agent (tools, files)'), h('option', { value: 'direct' }, 'Direct answer'));
  const tier = h('select', { name: 'tier', id: 'tier' }, ...options.models.map((id) => h('option', { value: id }, id)));
  const files = h('input', { type: 'file', name: 'files', id: 'files', multiple: true });
  const send = h('button', { type: 'submit', className: 'primary', id: 'send' }, 'Send');
  const cancel = h('button', { type: 'button', className: 'danger', id: 'cancel-running', hidden: true }, 'Cancel');
  const problem = h('p', { className: 'error-text', role: 'alert', id: 'send-problem', hidden: true });
  const liveBox = h('div', { id: 'live' });
  const composer = h(
    'form',
    { className: 'card composer', id: 'composer' },
    h('label', { htmlFor: 'prompt', className: 'sr-only' }, 'Request'),
    prompt,
    h(
      'div',
      { className: 'composer-row' },
      h('label', {}, 'mode ', mode),
      h('label', {}, 'model ', tier),
      h('label', {}, 'attach ', files),
      h('span', { className: 'grow' }),
      cancel,
      send,
    ),
    problem,
  );
  setView(h('div', { className: 'toolbar' }, h('h2', { className: 'grow' }, 'Conversation'), h('label', {}, 'conversation ', picker)), note, turns, liveBox, composer);

  const running = (task) => {
    cancel.hidden = !task;
    send.textContent = task ? 'Steer' : 'Send';
    prompt.placeholder = task ? 'A correction for the running Task (Enter sends)' : 'Ask for something (Enter sends, Shift+Enter is a new line)';
    cancel.onclick = task
      ? async () => {
          cancel.disabled = true;
          await api(`tasks/${encodeURIComponent(task)}/cancel`, { method: 'POST' }).catch((error) => handleAuthError(error) || alert(`Cancel failed: ${error.message}`));
          cancel.disabled = false;
        }
      : null;
  };
  /** Follows a Task here; the turns are read anew once it has ended. */
  const waiting = h('div', { id: 'live-waiting' });
  let looking = null;
  /** What the followed Task waits for in place (an approval, a question), answered here; looked up once things settle. */
  const lookForWaiting = (taskId) => {
    clearTimeout(looking);
    looking = setTimeout(async () => {
      const task = await api(`tasks/${encodeURIComponent(taskId)}`, { refresh: true }).catch(() => null);
      if (task)
        waiting.replaceChildren(
          ...task.pending_approvals.map((item) =>
            h('div', { className: 'card pending-here', dataset: { approvalId: item.approval_id } }, ...approvalItem(item, () => waiting.replaceChildren())),
          ),
        );
    }, 300);
  };
  const follow = (taskId) => {
    live?.stop();
    live = liveTask(
      taskId,
      () => {
        live = null;
        clearTimeout(looking);
        liveBox.replaceChildren();
        waiting.replaceChildren();
        running(null);
        load();
      },
      () => lookForWaiting(taskId),
    );
    liveBox.replaceChildren(live.element, waiting);
    running(taskId);
  };
  // After an answer to a question or an approval (a new Task continues the run), a fork chosen, or a Task ended.
  const after = async (what) => {
    if (what?.undo) {
      try {
        const queued = await api(`sessions/${encodeURIComponent(what.undo.session_id)}/undo?${new URLSearchParams({ task_id: what.undo.task_id })}`, { method: 'POST' });
        await load();
        if (!live) follow(queued.task_id);
      } catch (error) {
        if (!handleAuthError(error)) note.textContent = `Undo refused: ${error.message}`;
      }
      return;
    }
    if (what?.forkFrom) {
      forkFrom = what.forkFrom;
      note.textContent = `The next request starts a new conversation from Task ${short(forkFrom)}.`;
      prompt.focus();
      return;
    }
    load();
  };
  const load = async () => {
    if (!sessionId) {
      turns.replaceChildren();
      note.textContent = forkFrom ? note.textContent : 'A new conversation: type a request below.';
      return;
    }
    try {
      const { items } = await api(`tasks?${new URLSearchParams({ session_id: sessionId, limit: '50' })}`);
      const ordered = items.slice().reverse();
      const lastTask = ordered.at(-1);
      // What the last turn waits for (a question, an approval) is answered here, in place.
      const pending = lastTask?.awaiting_approval ? (await api(`tasks/${encodeURIComponent(lastTask.task_id)}`)).pending_approvals : [];
      turns.replaceChildren(...ordered.map((task) => turnItem(task, task === lastTask ? pending : [], options, after, task === lastTask)));
      note.textContent = items.length === 50 ? 'The last 50 turns.' : '';
      if (lastTask && ACTIVE.includes(lastTask.status) && !live) follow(lastTask.task_id);
    } catch (error) {
      if (!handleAuthError(error)) note.textContent = error.message;
    }
  };

  composer.addEventListener('submit', async (event) => {
    event.preventDefault();
    const text = prompt.value.trim();
    if (!text) return;
    send.disabled = true;
    problem.hidden = true;
    try {
      const parts = await Promise.all([...files.files].map(partOf));
      const body = {
        model: tier.value,
        agent_mode: mode.value === 'agent',
        messages: [{ role: 'user', content: parts.length ? [{ type: 'text', text }, ...parts] : text }],
        ...(forkFrom ? { fork_from: forkFrom } : sessionId ? { session_id: sessionId } : {}),
        // Steering (issue 35): while a Task of this conversation runs, what is typed is a correction for it
        // (the Chat API's agent_steer); a Task that has just ended takes none, and it becomes the next turn.
        ...(live && sessionId && !forkFrom ? { agent_steer: true } : {}),
      };
      const accepted = await api('conversation', { method: 'POST', json: body });
      prompt.value = '';
      files.value = '';
      forkFrom = null;
      if (accepted.session_id !== sessionId) {
        sessionId = accepted.session_id;
        history.replaceState(null, '', `#/chat?session=${sessionId}`);
      }
      await load();
      if (!live) follow(accepted.task_id);
    } catch (error) {
      if (!handleAuthError(error)) Object.assign(problem, { hidden: false, textContent: `Not sent: ${error.message}` });
    } finally {
      send.disabled = false;
    }
  });
  // Enter sends; Shift+Enter (and Enter while an input method composes) is a new line.
  prompt.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      composer.requestSubmit();
    }
  });
  // A view left stops following its Task.
  window.addEventListener('hashchange', () => live?.stop(), { once: true });
  await load();
  prompt.focus();
}
