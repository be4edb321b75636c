'use strict';
// Colyseus 0.18 server for the human-pace capacity run: the peers' server.js with the room that
// takes spectators (room_human.js), on 127.0.0.1, PORT=0 for an ephemeral port.
process.env.NODE_ENV = process.env.NODE_ENV || 'production';
const { Server } = require('@colyseus/core');
const { WebSocketTransport } = require('@colyseus/ws-transport');
const { HumanPaceRoom } = require('./room_human');
const { installSignalDiag } = require('../common/diag');

const HOST = '127.0.0.1';
const PORT = parseInt(process.env.PORT || '0', 10);

async function main() {
  installSignalDiag();
  const server = new Server({ transport: new WebSocketTransport(), greet: false, gracefullyShutdown: false });
  server.define('connect_four', HumanPaceRoom);
  await server.listen(PORT, HOST);
  const addr = server.transport.server.address();
  console.log(`LISTENING ${addr.address}:${addr.port}`);
  const stop = () => process.exit(0);
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
