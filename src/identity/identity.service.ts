import { Injectable } from '@nestjs/common';
import { userInfo } from 'node:os';
import type { Caller } from './caller.js';

/**
 * Establishes the caller. Without an SSO proxy in front the HTTP server listens for one local user;
 * on stdio the caller is the OS user that started the process.
 */
@Injectable()
export class IdentityService {
  private readonly osUser = safeOsUser();

  forHttp(remoteAddress: string | undefined): Caller {
    return { user: 'local', groups: [], transport: 'http', address: remoteAddress ?? null, client: null };
  }

  forStdio(): Caller {
    return { user: this.osUser, groups: [], transport: 'stdio', address: null, client: null };
  }
}

function safeOsUser(): string {
  try {
    return userInfo().username;
  } catch {
    return `uid:${process.getuid?.() ?? 'unknown'}`;
  }
}
