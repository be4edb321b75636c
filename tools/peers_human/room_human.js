'use strict';
// The peers' Connect Four room (room.js, unchanged) plus spectators, for the human-pace capacity run
// (tafel tools/peers_human.sh). The stock room holds two players (maxClients = 2) and has no
// spectator concept; this is the smallest one in Colyseus' own terms:
// - players matchmake with client.joinOrCreate('connect_four'): the room is public with two seats;
// - when the second player sits down the room turns private (out of joinOrCreate's reach) and
//   takes up to COLYSEUS_SPECTATORS_PER_ROOM more clients, who join by id with {spectate: true},
//   hold no seat (a move from them is answered 'invalid' by the stock handler) and receive the
//   same state patches as the players.
// COLYSEUS_PATCH_RATE_MS sets the stock patch timer (50 ms; every change is already broadcast at
// once in the default COLYSEUS_PATCH=immediate, so the timer only finds nothing to send).
const { ConnectFourRoom } = require('./room');

const SPECTATORS = parseInt(process.env.COLYSEUS_SPECTATORS_PER_ROOM || '16', 10);
const PATCH_RATE_MS = process.env.COLYSEUS_PATCH_RATE_MS ? Number(process.env.COLYSEUS_PATCH_RATE_MS) : null;
const IMMEDIATE = (process.env.COLYSEUS_PATCH || 'immediate') !== 'interval';

class HumanPaceRoom extends ConnectFourRoom {
  onCreate(options) {
    super.onCreate(options);
    if (PATCH_RATE_MS !== null) this.patchRate = PATCH_RATE_MS;
  }

  async onJoin(client, options) {
    if (options && options.spectate) return; // watches only
    if (this.state.players.length === 1) {
      // before the game starts (and its patch tells the clients), so that a spectator who reads
      // the game as playing finds the room open to it by id and closed to matchmaking
      await this.setMatchmaking({ private: true, maxClients: 2 + SPECTATORS });
    }
    super.onJoin(client);
  }

  onLeave(client) {
    if (!this.state.players.includes(client.sessionId)) return; // a spectator left
    const was = this.state.status;
    super.onLeave(client);
    // the stock room ends an unfinished game without a patch (its players leave only when it is
    // over); here the opponent of a player who stops must see it now
    if (IMMEDIATE && this.state.status !== was) this.broadcastPatch();
  }
}

module.exports = { HumanPaceRoom, SPECTATORS };
