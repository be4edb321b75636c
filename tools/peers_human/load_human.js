'use strict';
// Human-pace capacity load for the Colyseus Connect Four room (tafel tools/peers_human.sh; the
// server is server_human.js). Players behave as tafel's capacity benchmark's do:
// - every player holds its game room's WebSocket for the whole game, thinking included
//   (Colyseus has no connection outside a room: between two games a player holds none for the
//   short pause and the matchmaking call);
// - before each move it thinks for a time drawn from a log-normal with shape --think-sigma, capped
//   at --think-cap, its median solved for so that the capped draws have the mean --think-mean
//   (tafel's Go players' thinker, clients/loadgen/go/human.go, with its defaults: 10 s, 0.75,
//   45 s = 3/4 of their 60 s per-move clock), then sends a random legal column;
// - before its first game and after each, a pause (uniform 0.5x-1.5x --pause), then the next game
//   through client.joinOrCreate: Colyseus' normal matchmaking;
// - a share of the clients (--spectators) spectate instead: join a live game by id with
//   {spectate: true}, watch it to its end, pause, watch another;
// - latency: from the mover sending its move until the OPPONENT's client observes the state
//   that contains it, as the peers' harness measures (both clients in this process).
// Ramp: --step clients more each step (--connect-rate a second), --settle s, then a measured
// --window s; it stops after a step with p99 > --p99-ms or any error (from the step's first
// arrival on), or once --target clients are in. Then a --hold s window at the highest step that
// met the bar (when a later one missed it, that step's clients stop first).
//
//   node load_human.js --url http://127.0.0.1:PORT --server-pid PID [--step 2000] [--target 40000]
//       [--settle 30] [--window 60] [--hold 600] [--p99-ms 100] [--spectators 0.1] [--think-mean 10]
//       [--think-sigma 0.75] [--think-cap 45] [--pause 5] [--connect-rate 500] [--out steps.jsonl]
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
const STEP = num('step', 2000);
const TARGET = num('target', 40000);
const WINDOW_S = num('window', 60);
const SETTLE_S = num('settle', 30);
const CONNECT_RATE = num('connect-rate', 500);
const HOLD_S = num('hold', 600);
const P99_MAX = num('p99-ms', 100);
const SPECTATORS = num('spectators', 0.1);
const THINK = { mean_s: num('think-mean', 10), sigma: num('think-sigma', 0.75), cap_s: num('think-cap', 45) };
const PAUSE_S = num('pause', 5);
const MAX_STEPS = num('max-steps', 1000);
const ROOM = 'connect_four';
const STATUS = { WAITING: 0, PLAYING: 1, OVER: 2 };
// a game with no move for this long has stalled (a think is at most the cap)
const STALL_MS = (THINK.cap_s + 30) * 1000;

for (const [k, v] of Object.entries({ STEP, TARGET, WINDOW_S, CONNECT_RATE, P99_MAX, PAUSE_S })) {
  if (!(v > 0)) { console.error(`${k} must be > 0`); process.exit(2); }
}
if (!(SPECTATORS >= 0 && SPECTATORS < 1) || !(THINK.mean_s > 0) || !(THINK.sigma > 0) || !(THINK.cap_s > THINK.mean_s)) {
  console.error('--spectators in [0, 1), --think-mean > 0, --think-sigma > 0, --think-cap > --think-mean');
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

// standard normal CDF (Abramowitz-Stegun 7.1.26 erf, |error| < 1.5e-7)
function phi(x) {
  const z = Math.abs(x) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * z);
  const erf = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-z * z);
  return x >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
}
// E[min(X, cap)] for X log-normal(mu, sigma)
function cappedMean(mu, sigma, cap) {
  const lc = Math.log(cap);
  return Math.exp(mu + (sigma * sigma) / 2) * phi((lc - mu - sigma * sigma) / sigma) + cap * (1 - phi((lc - mu) / sigma));
}
// mu such that the capped draws have the asked mean (bisection, as the Go players' newThinker)
const THINK_MU = (() => {
  let lo = Math.log(THINK.mean_s) - 20, hi = Math.log(THINK.cap_s) + 20;
  for (let i = 0; i < 200; i++) {
    const mid = (lo + hi) / 2;
    if (cappedMean(mid, THINK.sigma, THINK.cap_s) < THINK.mean_s) lo = mid; else hi = mid;
  }
  return (lo + hi) / 2;
})();
THINK.median_s = Math.exp(THINK_MU);

// log-normal: exp(mu + sigma * z), z standard normal (Box-Muller), capped
function thinkMs() {
  const u1 = 1 - Math.random();
  const z = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * Math.random());
  return Math.min(Math.exp(THINK_MU + THINK.sigma * z), THINK.cap_s) * 1000;
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
  spectateJoins: 0,    // spectators who got into a game, this window
  windowOpen: false,
  lat: [], moves: 0, games: 0, watched: 0, joinMs: [],  // joinMs: search -> the game's first view
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
    this.timer = null; this.lastProgress = now(); this.done = null; this.inPlay = false;
  }

  async run() {
    await sleep(pauseMs()); // a person's moment before the first search, as between games
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
    const queued = now();
    const room = await client.joinOrCreate(ROOM);
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
        this.inPlay = true;
        if (seat < 0) seat = state.players.indexOf(room.sessionId);
        if (!game) { game = liveAdd(room.roomId); stats.joinMs.push(now() - queued); }
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
    this.inPlay = false;
    liveRemove(room.roomId); // a player who leaves ends the game (the room's rule)
    if (this.room === room) { this.room = null; stats.connected--; }
    if (this.timer) { clearTimeout(this.timer); this.timer = null; }
    const f = this.done;
    this.done = null;
    if (f) f();
  }

  // waiting for an opponent is not a stall (at small counts one player may wait long)
  stalled(t) { return this.inPlay && t - this.lastProgress > STALL_MS; }

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
      stats.connected++; stats.watching++; stats.spectateJoins++;
      this.room = room; this.current = room;
      await new Promise((resolve) => {
        this.done = resolve;
        if (this.stopped) { this._leave(); return; }
        room.onError((code, message) => stats.error(`room_error:${code}:${message}`));
        room.onLeave(() => {
          if (this.room === room && !this.stopped) stats.error('unexpected_leave');
          this._finish(room);
        });
        room.onStateChange((state) => { if (state.status === STATUS.OVER) { stats.watched++; this._leave(); } });
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

function loadavg() {
  try { return Number(fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[0]); } catch (e) { return null; }
}
function memAvailable() {
  try {
    const info = fs.readFileSync('/proc/meminfo', 'utf8');
    const kb = (k) => Number(info.match(new RegExp(`^${k}:\\s+(\\d+)`, 'm'))[1]);
    return r3(kb('MemAvailable') / kb('MemTotal'));
  } catch (e) { return null; }
}
// CPU seconds every core of the machine spent busy so far (/proc/stat: all but idle and iowait)
function machineBusyS() {
  try {
    const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1, 9).map(Number);
    return (f.reduce((a, b) => a + b, 0) - f[3] - f[4]) / 100;
  } catch (e) { return null; }
}
const pcts = (sorted) => ({
  p50: r3(pct(sorted, 50)), p90: r3(pct(sorted, 90)), p99: r3(pct(sorted, 99)),
  max: r3(sorted.length ? sorted[sorted.length - 1] : null), samples: sorted.length,
});

let restRssMib = null; // the server's RSS before the first client

// One measured window; the row's names are those of tafel's side (tools/bench_capacity.py), so
// the two print in one table. Errors count from the step's first arrival (or the hold's start).
async function measure(label, windowS) {
  stats.lat = []; stats.moves = 0; stats.games = 0; stats.watched = 0; stats.joinMs = []; stats.spectateJoins = 0;
  const srv0 = SERVER_PID ? procStat(SERVER_PID) : null;
  const cli0 = process.cpuUsage();
  const machine0 = machineBusyS();
  const diag = createDiag();
  diag.snapshot(true);
  stats.windowOpen = true;
  const t0 = now();
  await sleep(windowS * 1000);
  stats.windowOpen = false;
  const wall = (now() - t0) / 1000;
  const cli1 = process.cpuUsage();
  const machine1 = machineBusyS();
  const srv1 = SERVER_PID ? procStat(SERVER_PID) : null;
  const rss = srv1 ? srv1.rss_kb / 1024 : null;
  return {
    step: String(label),
    players: clients.length,             // spectators included, as tafel's side counts them
    spectators: spectatorCount,
    connected: stats.connected,          // room connections open at the window's end
    in_game: stats.connected - stats.watching,
    watching: stats.watching,
    live_games: live.ids.length,
    moves: stats.moves,
    moves_per_s: r1(stats.moves / wall),
    latency_ms: pcts(stats.lat.sort((a, b) => a - b)),
    matchmaking_wait_ms: pcts(stats.joinMs.sort((a, b) => a - b)),
    errors: { ...stats.errors },
    games_finished: stats.games,
    games_watched: stats.watched,
    spectate_missed: stats.spectateMissed,
    server_cores: srv0 && srv1 ? r3((srv1.cpu_s - srv0.cpu_s) / wall) : null,
    loadgen_cores: r3(((cli1.user - cli0.user) + (cli1.system - cli0.system)) / 1e6 / wall),
    machine_cores_busy: machine0 !== null && machine1 !== null ? r3((machine1 - machine0) / wall) : null,
    server_rss_mib: r1(rss),
    server_hwm_mib: srv1 ? r1(srv1.hwm_kb / 1024) : null,
    server_kib_per_player: rss !== null && restRssMib !== null ? r1(((rss - restRssMib) * 1024) / Math.max(1, stats.connected)) : null,
    server_fds: SERVER_PID ? fds(SERVER_PID) : null,
    loadgen_fds: fds(process.pid),
    loadgen_rss_mib: r1(process.memoryUsage().rss / 1048576),
    loadgen_eld_ms: diag.snapshot(false).eld_ms,
    load_avg: loadavg(),
    mem_available: memAvailable(),
    window_s: r1(wall),
  };
}

const errorsOf = (row) => Object.values(row.errors).reduce((a, b) => a + b, 0);
const meets = (row) => errorsOf(row) === 0 && row.latency_ms.samples > 0 && row.latency_ms.p99 <= P99_MAX;

function emit(row) {
  const line = JSON.stringify(row);
  process.stderr.write('STEP ' + line + '\n');
  if (args.out) fs.appendFileSync(args.out, line + '\n');
}

async function main() {
  const rest = SERVER_PID ? procStat(SERVER_PID) : null;
  if (rest) restRssMib = rest.rss_kb / 1024;
  const watchdog = setInterval(() => {
    const t = now();
    for (const c of clients) {
      if (c.stalled(t)) { stats.error('stalled_game'); c.lastProgress = t; }
    }
  }, 5000);
  const steps = [];
  let best = null;
  let failedFrom = null; // the failing step's first client
  while (clients.length < TARGET && steps.length < MAX_STEPS) {
    const adding = Math.min(STEP, TARGET - clients.length);
    stats.errors = {}; stats.spectateMissed = 0;
    const from = clients.length;
    const began = now();
    for (let k = 0; k < adding; k++) {
      addClient();
      // --connect-rate arrivals a second, ten at a time
      if (k % 10 === 9) {
        const due = began + ((k + 1) * 1000) / CONNECT_RATE;
        if (due > now()) await sleep(due - now());
      }
    }
    await sleep(SETTLE_S * 1000);
    const row = await measure(clients.length, WINDOW_S);
    emit(row);
    steps.push(row);
    if (!meets(row)) { failedFrom = from; break; }
    best = row;
  }
  let hold = null;
  if (HOLD_S > 0 && best) {
    if (failedFrom !== null) {
      // back to the highest step that met the bar: the failing step's clients stop (their
      // opponents see their games end, as when a person leaves, and matchmake again)
      for (const c of clients.splice(failedFrom)) { if (c instanceof Spectator) spectatorCount--; c.stop(); }
      await sleep(SETTLE_S * 1000 + PAUSE_S * 1500);
    }
    stats.errors = {}; stats.spectateMissed = 0;
    hold = await measure('hold', HOLD_S);
    hold.hold_s = HOLD_S;
    emit(hold);
  }
  clearInterval(watchdog);
  for (const c of clients) c.stop();
  return {
    peer: 'colyseus',
    target: TARGET,
    step_players: STEP,
    think_mean_s: THINK.mean_s,
    think_sigma: THINK.sigma,
    think_cap_s: THINK.cap_s,
    think_median_s: r3(THINK.median_s),
    pause_s: PAUSE_S,
    spectators: SPECTATORS,
    p99_bar_ms: P99_MAX,
    at_rest: { server_rss_mib: r1(restRssMib) },
    steps,
    highest_passing_players: best ? best.players : 0,
    hold,
    hold_meets_bar: hold ? meets(hold) : null,
  };
}

main().then((res) => {
  process.stdout.write(JSON.stringify(res) + '\n');
  setTimeout(() => process.exit(0), 500);
}, (e) => {
  console.error(e);
  process.exit(1);
});
