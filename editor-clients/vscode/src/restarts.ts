// Crash recovery: a server that dies is started again after a growing pause, until it has died
// too often in a short time. Pure but for its timer, so it is tested without VS Code.

export interface RestartPolicy {
  limit: number; // this many crashes within windowMs give up
  windowMs: number;
  firstDelayMs: number; // the pause before the first restart, doubled for each further crash
  maxDelayMs: number;
}

export const RESTART_POLICY: RestartPolicy = { limit: 5, windowMs: 3 * 60_000, firstDelayMs: 2_000, maxDelayMs: 30_000 };

export type Decision =
  | { action: 'restart'; crash: number; limit: number; delayMs: number } // crash n of limit, restart in delayMs
  | { action: 'give-up'; crashes: number; windowMs: number };

/** What to do after the `crash`-th crash within the policy's window (1 for the first). */
export function decide(policy: RestartPolicy, crash: number): Decision {
  if (crash >= policy.limit) {
    return { action: 'give-up', crashes: crash, windowMs: policy.windowMs };
  }
  const delayMs = Math.min(policy.firstDelayMs * 2 ** (crash - 1), policy.maxDelayMs);
  return { action: 'restart', crash, limit: policy.limit, delayMs };
}

/** The crashes of one server and its pending restart. */
export class CrashRecovery {
  private crashes: number[] = []; // when each crash within the window happened (ms since the epoch)
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly restart: () => void,
    private readonly policy: RestartPolicy = RESTART_POLICY,
  ) {}

  /** The server went away unasked at `now`: count it, and unless that gives up, schedule the restart. */
  crashed(now = Date.now()): Decision {
    this.crashes = [...this.crashes.filter((time) => now - time < this.policy.windowMs), now];
    const decision = decide(this.policy, this.crashes.length);
    this.cancel();
    if (decision.action === 'restart') {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.restart();
      }, decision.delayMs);
    }
    return decision;
  }

  /** True while a restart is scheduled. */
  get pending(): boolean {
    return this.timer !== undefined;
  }

  /** A start or stop asked for by the user: no restart is pending and earlier crashes are forgiven. */
  reset(): void {
    this.cancel();
    this.crashes = [];
  }

  private cancel(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
