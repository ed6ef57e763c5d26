/**
 * `npm run bench:uploads`: the service's memory while 30 clients each announce a 28 MB body to /mcp
 * and never finish it (issue 9, finding 2: main at fe38acd went from 134 MB to 940 MB and stayed
 * there). Twice: unidentified clients (refused from their headers, nothing buffered), and identified
 * ones (bodies buffered up to `server.max_buffered_bytes`, the rest refused with 503). Prints RSS
 * before, during (every client has sent all but the last MB) and after they go away.
 */
import { connect, type Socket } from 'node:net';
import { MODERN } from '../test/support/mcp-clients.js';
import { ScriptedOllama } from '../test/support/scripted-ollama.js';
import { ServiceProcess, writeConfig } from '../test/support/service-process.js';
import { rss } from './measure.js';

const CLIENTS = 30;
const ANNOUNCED = 28_000_000;
const SENT = ANNOUNCED - 1_000_000;
const CHUNK = Buffer.alloc(64 * 1024, 'a');

/** One client: the head, then SENT bytes of body as fast as the server reads them, then silence. */
function unfinishedUpload(port: number): Promise<Socket> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => resolve(socket));
    socket.once('close', () => resolve(socket));
    const upload = async () => {
      const head = [
        `POST /mcp HTTP/1.1`,
        `Host: 127.0.0.1:${port}`,
        'Content-Type: application/json',
        'Accept: application/json, text/event-stream',
        `MCP-Protocol-Version: ${MODERN}`,
        'Mcp-Method: tools/call',
        'Mcp-Name: agent_run',
        `Content-Length: ${ANNOUNCED}`,
      ];
      socket.write(`${head.join('\r\n')}\r\n\r\n`);
      for (let sent = 0; sent < SENT && !socket.destroyed; sent += CHUNK.length) {
        if (!socket.write(CHUNK)) await writable(socket);
      }
      resolve(socket);
    };
    socket.once('connect', () => void upload());
  });
}

/** Resolves once `socket` drains or closes, leaving no listener behind. */
function writable(socket: Socket): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      socket.off('drain', done).off('close', done);
      resolve();
    };
    socket.on('drain', done).on('close', done);
  });
}

const mb = (kb: number) => `${(kb / 1024).toFixed(0)} MB`;

async function scenario(name: string, ollama: ScriptedOllama, overrides: Record<string, unknown>): Promise<void> {
  const service = await new ServiceProcess((await writeConfig(ollama.url, overrides)).file).start();
  const pid = service.pid!;
  await new Promise((done) => setTimeout(done, 1000));
  const before = await rss(pid);
  const sockets = await Promise.all(Array.from({ length: CLIENTS }, () => unfinishedUpload(service.port)));
  await new Promise((done) => setTimeout(done, 1000));
  const during = await rss(pid);
  const open = sockets.filter((socket) => !socket.destroyed).length;
  for (const socket of sockets) socket.destroy();
  await new Promise((done) => setTimeout(done, 5000));
  const after = await rss(pid);
  console.log(`| ${name} | ${mb(before)} | ${mb(during)} | ${mb(after)} | ${open} of ${CLIENTS} |`);
  await service.stop();
}

async function main(): Promise<void> {
  const ollama = new ScriptedOllama();
  await ollama.start();
  console.log(`${CLIENTS} clients, each announcing ${ANNOUNCED} bytes to /mcp and sending ${SENT} of them`);
  console.log('| clients | RSS before | during | 5 s after they leave | connections still open during |');
  console.log('|---|---|---|---|---|');
  await scenario('unidentified (proxy_headers, untrusted peer)', ollama, { auth: { mode: 'proxy_headers', trusted_proxies: ['10.9.9.9/32'] } });
  await scenario('identified (auth none), server.max_buffered_bytes 256 MiB', ollama, {});
  await ollama.stop();
}

void main();
