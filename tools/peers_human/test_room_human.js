'use strict';
// The human-pace room's spectators and matchmaking (starts its own server_human.js on 127.0.0.1).
//   node --test test_room_human.js      (in the copy's colyseus/ folder: tools/peers_human.sh)
const test = require('node:test');
const assert = require('node:assert');
const { spawn } = require('node:child_process');
const path = require('node:path');
const { Client } = require('@colyseus/sdk');

function startServer() {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [path.join(__dirname, 'server_human.js')], {
      env: { ...process.env, PORT: '0', COLYSEUS_SPECTATORS_PER_ROOM: '1' }, stdio: ['ignore', 'pipe', 'inherit'],
    });
    let buf = '';
    const t = setTimeout(() => { p.kill(); reject(new Error('server start timeout')); }, 15000);
    p.stdout.on('data', (d) => {
      buf += d;
      const m = buf.match(/LISTENING 127\.0\.0\.1:(\d+)/);
      if (m) { clearTimeout(t); resolve({ proc: p, port: Number(m[1]) }); }
    });
  });
}

const waitFor = (room, pred, ms = 3000) => new Promise((res, rej) => {
  if (room.state && pred(room.state)) return res(room.state);
  const t = setTimeout(() => rej(new Error('waitFor timeout')), ms);
  room.onStateChange((s) => { if (pred(s)) { clearTimeout(t); res(s); } });
});
const nextMessage = (room, type, ms = 3000) => new Promise((res, rej) => {
  const t = setTimeout(() => rej(new Error('no ' + type)), ms);
  const off = room.onMessage(type, (m) => { clearTimeout(t); off(); res(m); });
});

test('two players matchmake, a spectator watches by id, a leaver ends the game for the others', async () => {
  const { proc, port } = await startServer();
  try {
    const c = new Client(`http://127.0.0.1:${port}`);
    const a = await c.joinOrCreate('connect_four');
    const b = await c.joinOrCreate('connect_four');
    assert.strictEqual(b.roomId, a.roomId); // Colyseus' matchmaking seats the second in the first's room
    await waitFor(a, (s) => s.status === 1);
    // a full game is out of matchmaking's reach: the next player gets a room of its own
    const d = await c.joinOrCreate('connect_four');
    assert.notStrictEqual(d.roomId, a.roomId);
    // ...and open to a spectator by id, who sees the moves and holds no seat
    const w = await c.joinById(a.roomId, { spectate: true });
    await waitFor(w, (s) => s && s.players && s.players.length === 2);
    assert.deepStrictEqual(Array.from(w.state.players), [a.sessionId, b.sessionId]);
    a.send('move', 3);
    await waitFor(w, (s) => s.moves === 1);
    w.send('move', 4);
    assert.strictEqual((await nextMessage(w, 'invalid')).reason, 'not_your_turn');
    // one spectator a room here (COLYSEUS_SPECTATORS_PER_ROOM=1): the next is refused
    await assert.rejects(c.joinById(a.roomId, { spectate: true }));
    // a player who leaves ends the game, and the others see it at once
    await b.leave();
    await waitFor(a, (s) => s.status === 2);
    await waitFor(w, (s) => s.status === 2);
    await a.leave(); await w.leave(); await d.leave();
  } finally {
    proc.kill('SIGTERM');
  }
});
