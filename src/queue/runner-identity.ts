import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';

/**
 * Lease owners are `host/pid/boot`. A lease held by a process on this host that no longer exists
 * can be reclaimed at once (a restart recovers in seconds); any other lease only once it expires.
 * One per process (a Nest provider): the worker claims under it and the recovery spares its leases.
 */
@Injectable()
export class RunnerIdentity {
  readonly host = hostname();
  readonly boot = randomUUID().slice(0, 8);
  readonly id = `${this.host}/${process.pid}/${this.boot}`;

  isDead(owner: string): boolean {
    const [host, pidText, boot] = owner.split('/');
    const pid = Number(pidText);
    if (host !== this.host || !Number.isInteger(pid)) return false;
    if (pid === process.pid) return boot !== this.boot;
    try {
      process.kill(pid, 0);
      return false;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'ESRCH';
    }
  }
}
