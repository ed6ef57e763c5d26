import { z } from 'zod';

/**
 * `skills`: Agent Skills (folders with a `SKILL.md`) the agent may load when it needs them (issue 40).
 * Kept apart from config.schema.ts (which includes it) because it is one feature's whole surface.
 */

const KiB = 1024;
const isStringList = (value: unknown): value is string[] => Array.isArray(value) && value.every((item) => typeof item === 'string');
const groups = z.custom<string[]>(isStringList, { error: 'expected a list of strings' }).default(() => []);
const path = z.string({ error: 'expected a string' }).refine((value) => value.trim() !== '', { error: 'must not be empty' });
const whole = (fallback: number, min: number, max: number) =>
  z
    .number({ error: 'expected an integer' })
    .refine((value) => Number.isInteger(value) && value >= min && value <= max, { error: (issue) => `must be an integer between ${min} and ${max} (got ${String(issue.input)})` })
    .default(fallback);

/**
 * One folder of skill folders: a path, or `{ path, allow_groups }`. Normalised to `{ path, groups }`
 * (lists are not camel-cased by the loader, so the output names its own key).
 */
const dir = z.union(
  [
    path.transform((value) => ({ path: value, groups: [] as string[] })),
    z
      .strictObject({ path, allow_groups: groups }, { error: (issue) => (issue.code === 'unrecognized_keys' ? 'unknown key' : 'expected a path or { path, allow_groups }') })
      .transform((value) => ({ path: value.path, groups: value.allow_groups })),
  ],
  { error: 'expected a path or { path, allow_groups }' },
);

export const skillsSection = z.preprocess(
  (value) => value ?? undefined,
  z
    .strictObject(
      {
        dirs: z.array(dir, { error: 'expected a list of folders' }).default(() => []),
        // Past this many skills for one caller (or past 2000 characters of listing) the prompt lists none and offers find_skills.
        max_listed: whole(10, 1, 100),
        // A SKILL.md over this is skipped with a warning (it is loaded whole into the conversation).
        max_bytes: whole(64 * KiB, KiB, 1024 * KiB),
        // The session's own .agents/skills/*/SKILL.md: off by default, since the agent itself can write them.
        from_workspace: z.boolean({ error: 'expected true or false' }).default(false),
      },
      { error: (issue) => (issue.code === 'unrecognized_keys' ? 'unknown key' : 'expected a mapping') },
    )
    .prefault({}),
);
