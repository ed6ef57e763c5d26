/**
 * Why a run's AbortController fired: the run ends differently for each (cancelled, interrupted, or
 * silently, without writing, when another runner may own the Task now).
 */
export class CancelSignal extends Error {
  constructor() {
    super('cancelled');
  }
}

export class ShutdownSignal extends Error {
  constructor() {
    super('shutdown');
  }
}

export class LeaseLost extends Error {
  constructor() {
    super('lease lost');
  }
}
