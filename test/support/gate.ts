/**
 * A promise the test opens by hand. A scripted reply held on it (`heldUntil`, `holdBeforeChunk`) waits until the
 * test has seen what it wanted to see at that step: an event, where a timed delay raced the test's own reads.
 * `open` may be passed as a callback and called more than once.
 */
export interface Gate {
  readonly opened: Promise<void>;
  readonly open: () => void;
}

export function gate(): Gate {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}
