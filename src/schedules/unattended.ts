/** What an action that needs a person does in a Task nobody watches (see TaskRequest.unattended). */
export type UnattendedApprovals = 'deny' | 'wait';

/** `new`: every fire or delivery starts a new session; `continue`: all of them continue the schedule's or trigger's own. */
export type SessionMode = 'new' | 'continue';

/** Who an unattended Task runs as: the owner of the schedule or trigger, with the groups and email it was made with. */
export interface UnattendedOwner {
  user: string;
  groups: string[];
  email: string | null;
}

/** What schedules and triggers share: their owner, the work they start, and where its end is told. */
export interface UnattendedSource {
  id: string;
  owner: UnattendedOwner;
  name: string;
  request: string;
  sessionMode: SessionMode;
  /** The continuing session (`continue`), once the first Task has made it. */
  sessionId: string | null;
  tier: string;
  approvals: UnattendedApprovals;
  /** Where the end of each Task (and an approval it waits for) is posted, signed with `notifySecret`. */
  notifyUrl: string | null;
  notifySecret: string | null;
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
}

/** A row's owner columns as the owner. */
export const ownerOf = (row: { owner: string; ownerGroups: string; ownerEmail: string | null }): UnattendedOwner => ({
  user: row.owner,
  groups: JSON.parse(row.ownerGroups) as string[],
  email: row.ownerEmail,
});

/**
 * A claim's guard found its fire or delivery taken by another process (the unique key held): the
 * Task's whole unit is refused, and this process leaves the fire or delivery to the one that took it.
 */
export class ClaimTaken extends Error {
  constructor() {
    super('another process took this fire or delivery');
  }
}

/** A claim's `INSERT … ON CONFLICT DO NOTHING RETURNING id` as a guard: no row back means another process took it. */
export const claimGuard = (rows: unknown[]): void => {
  if (rows.length === 0) throw new ClaimTaken();
};

/** Booleans as each database binds them (better-sqlite3 takes no JS booleans). */
export const sqlFlag = (dialect: 'sqlite' | 'postgres', value: boolean) => (dialect === 'postgres' ? value : value ? 1 : 0);
