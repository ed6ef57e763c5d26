/**
 * What all request bodies together may hold in memory (`server.max_buffered_bytes`). Every body is read
 * into memory whole (ADR 0007), so without a bound, a few clients that announce the largest body and
 * send it slowly or never would hold the process's memory hostage; past the bound a request is
 * answered 503 instead of read.
 */
export class BodyBudget {
  private used = 0;

  /** `onRefused` counts each refusal for the operator (overload is not bad input, so it is not audited). */
  constructor(
    readonly limit: number,
    private readonly onRefused: () => void = () => undefined,
  ) {}

  /** One request's share, returned whole when that request is done with its body. */
  lease(): BodyLease {
    let held = 0;
    return {
      take: (bytes: number) => {
        if (this.used + bytes > this.limit) return (this.onRefused(), false);
        this.used += bytes;
        held += bytes;
        return true;
      },
      release: () => {
        this.used -= held;
        held = 0;
      },
    };
  }
}

export interface BodyLease {
  /** Takes `bytes` more from the budget; false (and nothing taken) when they would not fit. */
  take(bytes: number): boolean;
  release: () => void;
}
