// Figures the browser tests read (window.tafelMetrics): time from page load to the first board
// drawn, and when each game version was submitted here and drawn here (epoch ms, so two browser
// contexts on one machine can be compared: the opponent's move-to-screen latency).
interface Metrics {
  firstBoardMs?: number;
  submittedAt: Record<string, number>;
  drawnAt: Record<string, number>;
}

const now = (): number => performance.timeOrigin + performance.now();
const data: Metrics = { submittedAt: {}, drawnAt: {} };
(window as unknown as { tafelMetrics: Metrics }).tafelMetrics = data;

export const metrics = {
  firstBoard(): void {
    data.firstBoardMs ??= performance.now();
  },
  submitted(version: bigint): void {
    data.submittedAt[String(version + 1n)] = now();
  },
  drawn(version: bigint): void {
    data.drawnAt[String(version)] ??= now();
  },
};
