import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import { createServer, type RequestListener } from 'node:http';
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
 * many connections may be open at once (past it node:http closes new ones as they arrive).
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
    server.maxConnections = this.limits.maxConnections;
    this.httpServer = server;
  }
}
