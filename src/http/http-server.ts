import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { AgentConfig } from '../config/agent-config.js';

/**
 * How often node:http looks for requests past their header or request timeout. Its default, 30 s,
 * would let a connection outlive a 10 s header timeout by up to half a minute.
 */
const TIMEOUT_CHECK_MS = 1000;

/**
 * Nest's Express adapter with the node:http server built with our limits, some of which can only be
 * set when the server is created: how long a client may take to send its headers and its whole request
 * (node's default is 300 s, for any body), how long an idle keep-alive connection stays open, and how
 * many connections may be open at once (see countConnections).
 */
export class LimitedExpressAdapter extends ExpressAdapter {
  constructor(private readonly limits: AgentConfig['server']) {
    super();
  }

  override initHttpServer(_options: NestApplicationOptions): void {
    const server = createServer(
      {
        headersTimeout: this.limits.headersTimeoutMs,
        requestTimeout: this.limits.requestTimeoutMs,
        keepAliveTimeout: this.limits.keepAliveTimeoutMs,
        connectionsCheckingInterval: TIMEOUT_CHECK_MS,
      },
      this.getInstance<RequestListener>(),
    );
    countConnections(server, this.limits.maxConnections);
    this.httpServer = server;
  }
}

/**
 * Connections beyond this many past `server.max_connections` are closed as they arrive (node's own
 * maxConnections), so that even a flood cannot take every descriptor.
 */
export const PROBE_ROOM = 64;

/** Connections opened while `server.max_connections` were already open: answered 503, probes excepted. */
export const overLimit = new WeakSet<Socket>();

/**
 * Past `server.max_connections` a new connection is still accepted (up to PROBE_ROOM more), marked, and
 * its request answered `503` with Retry-After by the edge, except `/healthz` and `/readyz`: a load
 * balancer must be able to tell a full service from a dead one, and a client gets an answer, not a reset.
 */
function countConnections(server: Server, max: number): void {
  let open = 0;
  server.maxConnections = max + PROBE_ROOM;
  server.on('connection', (socket: Socket) => {
    open += 1;
    if (open > max) overLimit.add(socket);
    socket.once('close', () => (open -= 1));
  });
}
