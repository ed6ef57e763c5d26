import { createServer } from 'node:http';
/** The answer to a planning call (a chat request with a `format` schema) when no plan is scripted. */
export const DIRECT_PLAN = { content: '{"mode":"direct","subtasks":[]}' };
/**
 * An Ollama-compatible HTTP server for tests: /api/chat (NDJSON streaming and not), /api/show,
 * /api/tags, /api/version. Answers come from a script; it records every chat request and the
 * highest number of chats it ever served at once.
 */
export class ScriptedOllama {
    chats = [];
    maxConcurrentChats = 0;
    capabilities = ['completion', 'tools'];
    models = ['test-model:latest'];
    active = 0;
    script = [];
    plans = [];
    fallback = { content: 'scripted answer', promptEvalCount: 10, evalCount: 5 };
    server = null;
    waiters = [];
    get url() {
        return `http://127.0.0.1:${this.server.address().port}`;
    }
    get activeChats() {
        return this.active;
    }
    /** Answers for the next chat calls, in order; after them the fallback answer is used. */
    enqueue(...replies) {
        this.script.push(...replies);
    }
    /** Answers for the next planning calls (requests with `format`); after them, the direct plan. */
    enqueuePlan(...replies) {
        this.plans.push(...replies);
    }
    /** Chat requests that were not planning calls. */
    get workChats() {
        return this.chats.filter((chat) => chat.body.format === undefined);
    }
    setFallback(reply) {
        this.fallback = reply;
    }
    /** Resolves once `count` work (non-planning) chat requests have arrived in total. */
    async waitForChats(count, timeoutMs = 10_000) {
        const deadline = Date.now() + timeoutMs;
        while (this.workChats.length < count) {
            if (Date.now() > deadline)
                throw new Error(`expected ${count} chat requests, got ${this.workChats.length}`);
            await new Promise((resolve) => {
                this.waiters.push(resolve);
                setTimeout(resolve, 50);
            });
        }
    }
    async start() {
        this.server = createServer((req, res) => void this.route(req, res));
        await new Promise((resolve) => this.server.listen(0, '127.0.0.1', resolve));
        return this;
    }
    async stop() {
        this.server?.closeAllConnections();
        await new Promise((resolve) => this.server?.close(() => resolve()) ?? resolve());
    }
    async route(req, res) {
        const body = await readJson(req);
        switch (req.url) {
            case '/api/version':
                return json(res, 200, { version: '0.12.0' });
            case '/api/tags':
                return json(res, 200, { models: this.models.map((name) => ({ name, model: name, size: 1, digest: 'x' })) });
            case '/api/show':
                if (!this.knows(body.model))
                    return json(res, 404, { error: `model '${body.model}' not found` });
                return json(res, 200, { capabilities: this.capabilities, details: { family: 'test' }, model_info: {} });
            case '/api/chat':
                return this.chat(req, res, body);
            default:
                return json(res, 404, { error: 'not found' });
        }
    }
    knows(model) {
        return typeof model === 'string' && this.models.some((name) => name === model || name === `${model}:latest`);
    }
    async chat(req, res, body) {
        const record = { body, aborted: false };
        this.chats.push(record);
        this.waiters.splice(0).forEach((wake) => wake());
        this.active += 1;
        this.maxConcurrentChats = Math.max(this.maxConcurrentChats, this.active);
        let closed = false;
        res.on('close', () => {
            closed = true;
            if (!res.writableFinished)
                record.aborted = true;
        });
        try {
            if (!this.knows(body.model))
                return json(res, 404, { error: `model '${body.model}' not found, try pulling it first` });
            const reply = body.format !== undefined ? (this.plans.shift() ?? DIRECT_PLAN) : (this.script.shift() ?? this.fallback);
            if (reply.hang) {
                await new Promise((resolve) => res.on('close', () => resolve()));
                return;
            }
            await sleep(reply.delayMs ?? 0);
            if (closed)
                return;
            if (reply.status)
                return json(res, reply.status, { error: reply.error ?? 'scripted failure' });
            const content = reply.content ?? '';
            const toolCalls = reply.toolCalls?.map((call, index) => ({ id: `call_${this.chats.length}_${index}`, function: { index, ...call } }));
            const final = {
                model: body.model,
                created_at: new Date().toISOString(),
                message: { role: 'assistant', content: '' },
                done: true,
                done_reason: 'stop',
                prompt_eval_count: reply.promptEvalCount ?? 0,
                eval_count: reply.evalCount ?? 0,
            };
            if (body.stream === false) {
                return json(res, 200, { ...final, message: { role: 'assistant', content, ...(toolCalls ? { tool_calls: toolCalls } : {}) } });
            }
            res.writeHead(200, { 'Content-Type': 'application/x-ndjson' });
            const half = Math.ceil(content.length / 2);
            for (const part of [content.slice(0, half), content.slice(half)]) {
                const chunk = { model: body.model, created_at: final.created_at, message: { role: 'assistant', content: part }, done: false };
                res.write(`${JSON.stringify(chunk)}\n`);
                await sleep((reply.delayMs ?? 0) / 2);
                if (closed)
                    return;
            }
            if (toolCalls) {
                // Ollama sends a tool call whole, in one chunk of its own.
                const chunk = { model: body.model, created_at: final.created_at, message: { role: 'assistant', content: '', tool_calls: toolCalls }, done: false };
                res.write(`${JSON.stringify(chunk)}\n`);
            }
            res.end(`${JSON.stringify(final)}\n`);
        }
        finally {
            this.active -= 1;
        }
    }
}
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
function json(res, status, body) {
    if (res.headersSent || res.destroyed)
        return;
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body));
}
async function readJson(req) {
    const chunks = [];
    for await (const chunk of req)
        chunks.push(chunk);
    if (chunks.length === 0)
        return {};
    try {
        return JSON.parse(Buffer.concat(chunks).toString('utf8'));
    }
    catch {
        return {};
    }
}
