// Figures the browser tests read (window.tafelMetrics): time from page load to the first board
// drawn, and when each game version was submitted here and drawn here (epoch ms, so two browser
// contexts on one machine can be compared: the opponent's move-to-screen latency).
const now = (): number => performance.timeOrigin + performance.now();

export class Metrics {
  firstBoardMs: number | undefined;
  readonly submittedAt: Record<string, number> = {};
  readonly drawnAt: Record<string, number> = {};

  firstBoard(): void {
    this.firstBoardMs ??= performance.now();
  }

  /** A move was sent against `version`: it will make version + 1. */
  submitted(version: bigint): void {
    this.submittedAt[String(version + 1n)] = now();
  }

  drawn(version: bigint): void {
    this.drawnAt[String(version)] ??= now();
  }
}
