// How often a crashed server is restarted: at most `max` crashes within `windowMs`.

export class RestartPolicy {
  private crashes: number[] = [];

  constructor(
    readonly max = 4,
    readonly windowMs = 3 * 60 * 1000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Record a crash; true when the server may be restarted once more. */
  recordCrash(): boolean {
    const t = this.now();
    this.crashes = this.crashes.filter((c) => t - c < this.windowMs);
    this.crashes.push(t);
    return this.crashes.length <= this.max;
  }

  get recent(): number {
    const t = this.now();
    return this.crashes.filter((c) => t - c < this.windowMs).length;
  }

  /** A deliberate (re)start: forget earlier crashes. */
  reset(): void {
    this.crashes = [];
  }
}
