"""A rules replica dies mid-game: the gateway's streams to it break, the action in flight is retried on
the other replica with the same request id, and the game goes on."""

from __future__ import annotations

import asyncio

from tafel.play.v1 import play_pb2

from tests.gateway.harness import Client, PlayStream, c4_move, new_id, seating, spawn_gateway, spawn_rules


async def test_the_game_goes_on_when_a_rules_replica_dies(redis_url: str) -> None:
    first, second = spawn_rules(redis_url), spawn_rules(redis_url)
    gateway = spawn_gateway(redis_url, {"connect4": f"{first.address},{second.address}"})
    try:
        a = await Client(gateway.address).guest()
        b = await Client(gateway.address).guest()
        async with seating(redis_url, {"connect4": first.address}) as seats:
            games = [await seats.start([a.player, b.player]) for _ in range(6)]
            stream = PlayStream(a)
            for game_id in games:
                answer = await stream.request(
                    submit_move=play_pb2.SubmitMoveRequest(
                        game_id=game_id, expected_version=0, request_id=new_id(), move=c4_move(3)
                    )
                )
                assert answer.move_accepted.version == 1
            first.kill()  # some of these games were routed to it
            for game_id in games:
                assert (await b.move(game_id, 1, 4)).version == 2
            answers = await asyncio.gather(
                *(
                    stream.request(
                        submit_move=play_pb2.SubmitMoveRequest(
                            game_id=game_id, expected_version=2, request_id=new_id(), move=c4_move(3)
                        )
                    )
                    for game_id in games
                )
            )
            assert [answer.move_accepted.version for answer in answers] == [3] * len(games)
            await stream.close()
        await a.close()
        await b.close()
    finally:
        for proc in (gateway, first, second):
            proc.stop()
