// Typed moves and options for every game, wrapped into the tafel.games.v1 unions the API takes.
//   moves.connect4(3)
//   moves.plus4(2, { bonus: true })
//   moves.coloursquare([placeOnCell(Die.RED, 0, 1, Colour.RED), placeOnJoker(Die.BLUE, 0)])

import { create, type MessageInitShape } from "@bufbuild/protobuf";
import * as coloursquare from "./gen/tafel/coloursquare/v1/coloursquare_pb.js";
import * as connect4 from "./gen/tafel/connect4/v1/connect4_pb.js";
import { GameMoveSchema, GameOptionsSchema, type GameMove, type GameOptions } from "./gen/tafel/games/v1/games_pb.js";
import * as plus4 from "./gen/tafel/plus4/v1/plus4_pb.js";

/** How a move or resignation is sent (TafelClient.submitMove, PlayStream.submitMove). */
export interface MoveOptions {
  /** The version the move was made against; read from the server when unset. */
  expectedVersion?: bigint;
  /** Reuse to retry a move by hand; chosen by the SDK when unset. */
  requestId?: string;
  /** Only when one player holds several seats of a game. */
  seat?: number;
}

/** The machine names of the games (GameType.game). */
export type GameName = "connect4" | "plus4" | "coloursquare";

export const moves = {
  connect4(column: number): GameMove {
    return create(GameMoveSchema, { game: { case: "connect4", value: { column } } });
  },
  plus4(column: number, { bonus = false }: { bonus?: boolean } = {}): GameMove {
    return create(GameMoveSchema, { game: { case: "plus4", value: { column, bonus } } });
  },
  /** A seat's whole placement list for the round or its final turn; empty = pass. */
  coloursquare(placements: coloursquare.Placement[]): GameMove {
    return create(GameMoveSchema, { game: { case: "coloursquare", value: { placements } } });
  },
};

/** A die written into a cell (`colour` names which of the square's four cells). */
export function placeOnCell(
  die: coloursquare.Die,
  row: number,
  column: number,
  colour: coloursquare.Colour,
): coloursquare.Placement {
  return create(coloursquare.PlacementSchema, { die, target: { case: "cell", value: { row, column, colour } } });
}

/** A die written into joker field 0 or 1. */
export function placeOnJoker(die: coloursquare.Die, joker: number): coloursquare.Placement {
  return create(coloursquare.PlacementSchema, { die, target: { case: "joker", value: joker } });
}

export const options = {
  connect4(init: MessageInitShape<typeof connect4.OptionsSchema> = {}): GameOptions {
    return create(GameOptionsSchema, { game: { case: "connect4", value: init } });
  },
  plus4(init: MessageInitShape<typeof plus4.OptionsSchema> = {}): GameOptions {
    return create(GameOptionsSchema, { game: { case: "plus4", value: init } });
  },
  coloursquare(init: MessageInitShape<typeof coloursquare.OptionsSchema> = {}): GameOptions {
    return create(GameOptionsSchema, { game: { case: "coloursquare", value: init } });
  },
};
