'use strict';
// Human-pace capacity load for the Colyseus Connect Four room (tafel tools/peers_human.sh; the
// server is server_human.js). Players behave as tafel's capacity benchmark's do:
// - every player holds its game room's WebSocket for the whole game, thinking included
//   (Colyseus has no connection outside a room: between two games a player holds none for the
//   short pause and the matchmaking call);
// - before each move it thinks for a time drawn from a log-normal (--think-median, --think-sigma,
//   capped at --think-cap; the defaults 6 s and 1.0 give a mean of ~9.9 s before the cap, ~9.3 s
//   after it), then sends a random legal column;
// - when a game ends both players leave and, after a short pause (uniform 0.5x-1.5x --pause),
//   matchmake the next with client.joinOrCreate: Colyseus' normal matchmaking;
// - a share of the clients (--spectators) spectate instead: join a live game by id with
//   {spectate: true}, watch it to its end, pause, watch another;
// - latency: from the mover sending its move until the OPPONENT's client observes the state
//   that contains it, as the peers' harness measures (both clients in this process).
// Ramp: --step clients more each step (their arrivals spread over --arrive s), --settle s, then
// a measured --window s; it stops after a step with p99 > --p99-max ms or any error, or once
// --target clients are in. Then a --hold s window: at the last step when it passed, else after
// the failing step's clients have stopped (at the last level that passed).
//
//   node load_human.js --url http://127.0.0.1:PORT --server-pid PID [--step 1000] [--target 40000]
//       [--window 30] [--settle 5] [--arrive 10] [--hold 0] [--p99-max 100] [--spectators 0.1]
//       [--think-median 6] [--think-sigma 1] [--think-cap 60] [--pause 2] [--out steps.jsonl]
//
// One JSON line per step on stderr (and to --out), the summary as one JSON line on stdout.
process.env.NODE_ENV = process.env.NODE_ENV || 'production';
const fs = require('fs');
const { performance } = require('perf_hooks');
const { Client } = require('@colyseus/sdk');
const { parseArgs, procStat, pct, sleep } = require('../common/harness');
const { createDiag } = require('../common/diag');
const { COLS } = require('../common/c4');

const args = parseArgs(process.argv);
const num = (name, dflt) => (args[name] === undefined ? dflt : Number(args[name]));
const URL_ = args.url || 'http://127.0.0.1:2567';
const SERVER_PID = args['server-pid'] ? parseInt(args['server-pid'], 10) : null;
const STEP = num('step', 1000);
const TARGET = num('target', 40000);
const WINDOW_S = num('window', 30);
const SETTLE_S = num('settle', 5);
const ARRIVE_S = num('arrive', 10);
const HOLD_S = num('hold', 0);
const P99_MAX = num('p99-max', 100);
const SPECTATORS = num('spectators', 0.1);
const THINK = { median_s: num('think-median', 6), sigma: num('think-sigma', 1), cap_s: num('think-cap', 60) };
const PAUSE_S = num('pause', 2);
const MAX_STEPS = num('max-steps', 1000);
const ROOM = 'connect_four';
const STATUS = { WAITING: 0, PLAYING: 1, OVER: 2 };
// a game with no move for this long has stalled (a think is at most the cap)
const STALL_MS = (THINK.cap_s + 30) * 1000;

for (const [k, v] of Object.entries({ STEP, TARGET, WINDOW_S, ARRIVE_S, P99_MAX, PAUSE_S })) {
  if (!(v > 0)) { console.error(`${k} must be > 0`); process.exit(2); }
}
if (!(SPECTATORS >= 0 && SPECTATORS < 1) || !(THINK.median_s > 0) || !(THINK.sigma >= 0) || !(THINK.cap_s > 0)) {
  console.error('--spectators in [0, 1), --think-median > 0, --think-sigma >= 0, --think-cap > 0');
  process.exit(2);
}
{
  const u = new URL(URL_);
  if (u.hostname !== '127.0.0.1' && u.hostname !== 'localhost') {
    console.error('refusing non-loopback target', URL_);
    process.exit(2);
  }
}

const client = new Client(URL_);
const now = () => performance.now();

// log-normal: median * exp(sigma * z), z standard normal (Box-Muller), capped
function thinkMs() {
  const u1 = 1 - Math.random();
  const z = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * Math.random());
  return Math.min(THINK.median_s * Math.exp(THINK.sigma * z), THINK.cap_s) * 1000;
}
const pauseMs = () => PAUSE_S * 1000 * (0.5 + Math.random());

function randomLegalColumn(board) {
  const legal = [];
  for (let c = 0; c < COLS; c++) if (board[c] === 0) legal.push(c); // top row empty
  return legal.length ? legal[(Math.random() * legal.length) | 0] : -1;
}

// ---- what a step measures
const stats = {
  connected: 0,        // room connections open now (players in a game or waiting for one, spectators)
  watching: 0,         // of which spectators'
  windowOpen: false,
  lat: [], moves: 0, games: 0, joinMs: [],
  errors: {},          // since the step began (its arrivals included)
  spectateMissed: 0,   // a spectator's game ended (room gone) before it got in: it picks another
  error(kind) { this.errors[kind] = (this.errors[kind] || 0) + 1; },
  move(t0, t1) { if (this.windowOpen) { this.moves++; this.lat.push(t1 - t0); } },
};

// live games (both seats in, not over): the spectators' directory and the live-games count
const live = { ids: [], at: new Map(), games: new Map() };
function liveAdd(roomId) {
  if (live.at.has(roomId)) return live.games.get(roomId);
  live.at.set(roomId, live.ids.length);
  live.ids.push(roomId);
  const game = { pending: null };
  live.games.set(roomId, game);
  return game;
}
function liveRemove(roomId) {
  const i = live.at.get(roomId);
  if (i === undefined) return;
  const last = live.ids.pop();
  if (last !== roomId) { live.ids[i] = last; live.at.set(last, i); }
  live.at.delete(roomId);
  live.games.delete(roomId);
}

class Player {
  constructor() {
    this.stopped = false;
    this.room = null;     // the room whose connection this player holds
    this.current = null;  // the room of the game being played (until its promise resolves)
    this.timer = null; this.lastProgress = now(); this.done = null;
  }

  async run() {
    while (!this.stopped) {
      try {
        await this.playOne();
      } catch (e) {
        if (!this.stopped) { stats.error('match:' + ((e && e.message) || e)); }
      }
      if (this.stopped) break;
      await sleep(pauseMs());
    }
  }

  async playOne() {
    const t0 = now();
    const room = await client.joinOrCreate(ROOM);
    stats.joinMs.push(now() - t0);
    stats.connected++;
    this.room = room; this.current = room;
    this.lastProgress = now();
    await new Promise((resolve) => {
      this.done = resolve;
      if (this.stopped) { this._leave(); return; }
      let seat = -1;
      let seen = -1;       // state version last acted on
      let game = null;
      room.onMessage('invalid', (m) => stats.error('invalid:' + (m && m.reason)));
      room.onError((code, message) => stats.error(`room_error:${code}:${message}`));
      room.onLeave(() => {
        if (this.room === room && !this.stopped) stats.error('unexpected_leave');
        this._finish(room);
      });
      room.onStateChange((state) => {
        if (this.room !== room) return;
        if (state.status === STATUS.WAITING) return;
        if (seat < 0) seat = state.players.indexOf(room.sessionId);
        if (!game) game = liveAdd(room.roomId);
        if (state.moves > seen) {
          seen = state.moves;
          this.lastProgress = now();
          const p = game.pending;
          if (p && p.from !== seat && state.moves > p.base) { game.pending = null; stats.move(p.t0, now()); }
        }
        if (state.status === STATUS.OVER) {
          liveRemove(room.roomId);
          if (seat === 0) stats.games++;
          this._leave();
          return;
        }
        if (state.turn === seat && !this.timer) {
          const base = state.moves;
          this.timer = setTimeout(() => {
            this.timer = null;
            const st = room.state;
            if (this.room !== room || this.stopped || st.status !== STATUS.PLAYING || st.moves !== base) return;
            const col = randomLegalColumn(st.board);
            if (col < 0) { stats.error('no_legal_move'); return; }
            game.pending = { from: seat, base, t0: now() };
            room.send('move', col);
          }, thinkMs());
        }
      });
    });
  }

  _leave() {
    const room = this.room;
    if (!room) return;
    this.room = null;
    if (this.timer) { clearTimeout(this.timer); this.timer = null; }
    stats.connected--;
    room.leave(true).catch(() => {});
    this._finish(room);
  }

  // the game in `room` is over for this player; a late onLeave of an earlier room changes nothing
  _finish(room) {
    if (room !== this.current) return;
    this.current = null;
    if (this.room === room) { this.room = null; stats.connected--; }
    if (this.timer) { clearTimeout(this.timer); this.timer = null; }
    const f = this.done;
    this.done = null;
    if (f) f();
  }

  stalled(t) { return this.room && t - this.lastProgress > STALL_MS; }

  stop() { this.stopped = true; this._leave(); }
}

class Spectator {
  constructor() { this.stopped = false; this.room = null; this.current = null; this.done = null; }

  async run() {
    while (!this.stopped) {
      const ids = live.ids;
      if (ids.length === 0) { await sleep(1000); continue; }
      const roomId = ids[(Math.random() * ids.length) | 0];
      let room;
      try {
        room = await client.joinById(roomId, { spectate: true });
      } catch (e) {
        stats.spectateMissed++; // over (and gone) or full of spectators: pick another
        await sleep(200);
        continue;
      }
      stats.connected++; stats.watching++;
      this.room = room; this.current = room;
      await new Promise((resolve) => {
        this.done = resolve;
        if (this.stopped) { this._leave(); return; }
        room.onError((code, message) => stats.error(`room_error:${code}:${message}`));
        room.onLeave(() => {
          if (this.room === room && !this.stopped) stats.error('unexpected_leave');
          this._finish(room);
        });
        room.onStateChange((state) => { if (state.status === STATUS.OVER) this._leave(); });
      });
      if (!this.stopped) await sleep(pauseMs());
    }
  }

  _leave() {
    const room = this.room;
    if (!room) return;
    this.room = null;
    stats.connected--; stats.watching--;
    room.leave(true).catch(() => {});
    this._finish(room);
  }

  _finish(room) {
    if (room !== this.current) return;
    this.current = null;
    if (this.room === room) { this.room = null; stats.connected--; stats.watching--; }
    const f = this.done;
    this.done = null;
    if (f) f();
  }

  stalled() { return false; }

  stop() { this.stopped = true; this._leave(); }
}

function fds(pid) {
  try { return fs.readdirSync(`/proc/${pid}/fd`).length; } catch (e) { return null; }
}
const r1 = (x) => (x == null ? null : Math.round(x * 10) / 10);
const r3 = (x) => (x == null ? null : Math.round(x * 1000) / 1000);

const clients = [];
let spectatorCount = 0;
function addClient() {
  const k = clients.length;
  // the k-th client spectates when the share's running count steps up: the share holds at every size
  const spectate = Math.floor((k + 1) * SPECTATORS) > Math.floor(k * SPECTATORS);
  const c = spectate ? new Spectator() : new Player();
  if (spectate) spectatorCount++;
  clients.push(c);
  c.run().catch((e) => stats.error('client:' + ((e && e.message) || e)));
}

async function measure(label, windowS) {
  stats.lat = []; stats.moves = 0; stats.games = 0; stats.joinMs = [];
  const srv0 = SERVER_PID ? procStat(SERVER_PID) : null;
  const cli0 = process.cpuUsage();
  const diag = createDiag();
  diag.snapshot(true);
  stats.windowOpen = true;
  const t0 = now();
  await sleep(windowS * 1000);
  stats.windowOpen = false;
  const wall = (now() - t0) / 1000;
  const cli1 = process.cpuUsage();
  const srv1 = SERVER_PID ? procStat(SERVER_PID) : null;
  const lat = stats.lat.sort((a, b) => a - b);
  const join = stats.joinMs.sort((a, b) => a - b);
  const errorCount = Object.values(stats.errors).reduce((a, b) => a + b, 0);
  const players = clients.length - spectatorCount;
  const serverRssMib = srv1 ? srv1.rss_kb / 1024 : null;
  return {
    step: label,
    clients: clients.length,
    players,
    spectators: spectatorCount,
    connected: stats.connected,
    spectating: stats.watching,
    live_games: live.ids.length,
    moves: stats.moves,
    moves_per_s: r1(stats.moves / wall),
    games_finished: stats.games,
    lat_ms: { p50: r3(pct(lat, 50)), p90: r3(pct(lat, 90)), p99: r3(pct(lat, 99)), max: r3(lat.length ? lat[lat.length - 1] : null) },
    errors: { ...stats.errors },
    error_count: errorCount,
    spectate_missed: stats.spectateMissed,
    matchmaking_ms: { p50: r3(pct(join, 50)), p99: r3(pct(join, 99)) },
    server_cpu_cores: srv0 && srv1 ? r3((srv1.cpu_s - srv0.cpu_s) / wall) : null,
    server_rss_mib: r1(serverRssMib),
    server_hwm_mib: srv1 ? r1(srv1.hwm_kb / 1024) : null,
    server_rss_kib_per_connected: serverRssMib && stats.connected ? r1((serverRssMib * 1024) / stats.connected) : null,
    // above the server's RSS before the first client: what the connections and games cost
    server_rss_kib_per_connected_above_idle:
      serverRssMib && idleRssMib !== null && stats.connected ? r1(((serverRssMib - idleRssMib) * 1024) / stats.connected) : null,
    server_fds: SERVER_PID ? fds(SERVER_PID) : null,
    client_cpu_cores: r3(((cli1.user - cli0.user) + (cli1.system - cli0.system)) / 1e6 / wall),
    client_rss_mib: r1(process.memoryUsage().rss / 1048576),
    client_eld_ms: diag.snapshot(false).eld_ms,
    window_s: r3(wall),
  };
}

const passes = (s) => s.error_count === 0 && s.moves > 0 && s.lat_ms.p99 !== null && s.lat_ms.p99 <= P99_MAX;

function emit(record, out) {
  const line = JSON.stringify(record);
  process.stderr.write('STEP ' + line + '\n');
  if (out) fs.appendFileSync(out, line + '\n');
}

let idleRssMib = null;

async function main() {
  const idle = SERVER_PID ? procStat(SERVER_PID) : null;
  if (idle) idleRssMib = idle.rss_kb / 1024;
  const watchdog = setInterval(() => {
    const t = now();
    for (const c of clients) {
      if (c.stalled(t)) { stats.error('stalled_game'); c.lastProgress = t; }
    }
  }, 5000);
  const steps = [];
  let stopReason = 'target';
  let lastPassed = null;
  const levels = [];
  for (let i = 1; i <= MAX_STEPS; i++) {
    const want = Math.min(i * STEP, TARGET);
    const adding = want - clients.length;
    stats.errors = {}; stats.spectateMissed = 0;
    const level0 = clients.length;
    for (let k = 0; k < adding; k++) {
      addClient();
      // spread the step's arrivals over ARRIVE_S, a few at a time
      if (k % 10 === 9) await sleep((ARRIVE_S * 1000 * 10) / adding);
    }
    levels.push([level0, clients.length]);
    await sleep(SETTLE_S * 1000);
    const record = await measure(i, WINDOW_S);
    record.step_added = adding;
    emit(record, args.out);
    steps.push(record);
    if (!passes(record)) { stopReason = record.error_count ? 'errors' : 'p99'; break; }
    lastPassed = record;
    if (clients.length >= TARGET) break;
    if (i === MAX_STEPS) stopReason = 'max_steps';
  }
  let hold = null;
  if (HOLD_S > 0 && (stopReason === 'target' || stopReason === 'max_steps' || lastPassed)) {
    if (steps.length && !passes(steps[steps.length - 1]) && lastPassed) {
      // back to the last level that passed: the failing step's clients stop (their opponents'
      // games end and those players matchmake again)
      const [from] = levels[levels.length - 1];
      for (const c of clients.splice(from)) { if (c instanceof Spectator) spectatorCount--; c.stop(); }
      await sleep(SETTLE_S * 1000 + 5000);
    }
    stats.errors = {}; stats.spectateMissed = 0;
    hold = await measure('hold', HOLD_S);
    emit(hold, args.out);
  }
  clearInterval(watchdog);
  for (const c of clients) c.stop();
  const best = [...steps].reverse().find(passes) || null;
  return {
    peer: 'colyseus',
    mode: 'human',
    think: { ...THINK, mean_uncapped_s: r3(THINK.median_s * Math.exp((THINK.sigma * THINK.sigma) / 2)) },
    pause_s: PAUSE_S,
    spectator_share: SPECTATORS,
    p99_max_ms: P99_MAX,
    step: STEP,
    target: TARGET,
    window_s: WINDOW_S,
    stop_reason: stopReason,
    server_idle_rss_mib: r1(idleRssMib),
    best,
    hold,
    steps,
  };
}

main().then((res) => {
  process.stdout.write(JSON.stringify(res) + '\n');
  setTimeout(() => process.exit(0), 500);
}, (e) => {
  console.error(e);
  process.exit(1);
});
