package main

// Run by tests/loadgen/test_capacity_bench.py against its platform (TAFEL_TEST_GATEWAY, TAFEL_TEST_WEB).

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"reflect"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/types/known/durationpb"

	connect4v1 "tafel.dev/gen/tafel/connect4/v1"
	gamesv1 "tafel.dev/gen/tafel/games/v1"
	playv1 "tafel.dev/gen/tafel/play/v1"
)

type testPlayer struct {
	conn  *playConn
	close func()
}

func newTestPlayer(t *testing.T, ctx context.Context, via transport) *testPlayer {
	sess, err := via.signIn(ctx, 0)
	if err != nil {
		t.Fatalf("sign-in: %v", err)
	}
	stream, err := sess.play(ctx)
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	conn := &playConn{stream: stream}
	if err := conn.send(&playv1.PlayRequest{Action: &playv1.PlayRequest_SetOptions{SetOptions: &playv1.PlayOptions{BatchResponses: true}}}); err != nil {
		t.Fatalf("options: %v", err)
	}
	return &testPlayer{conn: conn, close: sess.close}
}

// answer: the response to the request just sent (events and other answers skipped).
func (p *testPlayer) answer() (*playv1.PlayResponse, error) {
	for {
		response, err := p.conn.next()
		if err != nil || response.GetCorrelationId() == p.conn.correlation {
			return response, err
		}
	}
}

// search: a match and the game's view, as human.go searches (FindMatch with watch; a watch of
// its own when the match comes without one, as over the edge).
func (p *testPlayer) search(requestID string) (*playv1.MatchFound, *playv1.GetGameResponse, error) {
	search := &playv1.FindMatchRequest{
		Game: "connect4", MinSeats: 2, MaxSeats: 2, Watch: true, RequestId: requestID,
		// A per-move clock no other test's search asks for, so that these two meet.
		TimeControl: &playv1.TimeControl{PerMove: durationpb.New(41 * time.Second)},
	}
	if err := p.conn.send(&playv1.PlayRequest{Action: &playv1.PlayRequest_FindMatch{FindMatch: search}}); err != nil {
		return nil, nil, err
	}
	var matched *playv1.MatchFound
	for {
		response, err := p.answer()
		if err != nil {
			return nil, nil, err
		}
		if refusal := response.GetRefusal(); refusal != nil {
			return nil, nil, fmt.Errorf("refused: %v", refusal)
		}
		if view := response.GetWatching(); view != nil {
			return matched, view, nil
		}
		if found := response.GetMatchUpdate().GetMatched(); found != nil {
			matched = found
			if !found.GetWatchStarted() {
				watch := &playv1.WatchGameRequest{GameId: found.GetGameId()}
				if err := p.conn.send(&playv1.PlayRequest{Action: &playv1.PlayRequest_Watch{Watch: watch}}); err != nil {
					return nil, nil, err
				}
			}
		}
	}
}

// submit: a move and its answer: accepted, or refused with the error kind human.go counts for it.
func (p *testPlayer) submit(t *testing.T, gameID string, expected uint64) (*playv1.SubmitMoveResponse, string, *playv1.Refusal) {
	move := &gamesv1.GameMove{Game: &gamesv1.GameMove_Connect4{Connect4: &connect4v1.Move{Column: 3}}}
	request := &playv1.SubmitMoveRequest{GameId: gameID, ExpectedVersion: expected, Move: move, RequestId: fmt.Sprintf("t%d", time.Now().UnixNano())}
	if err := p.conn.send(&playv1.PlayRequest{Action: &playv1.PlayRequest_SubmitMove{SubmitMove: request}}); err != nil {
		t.Fatalf("submit: %v", err)
	}
	response, err := p.answer()
	if err != nil {
		t.Fatalf("answer: %v", err)
	}
	if refusal := response.GetRefusal(); refusal != nil {
		return nil, codeName(codes.Code(refusal.GetCode())), refusal
	}
	return response.GetMoveAccepted(), "", nil
}

func TestARefusedMoveReadsTheSameOnBothTransports(t *testing.T) {
	gateway, web := os.Getenv("TAFEL_TEST_GATEWAY"), os.Getenv("TAFEL_TEST_WEB")
	if gateway == "" || web == "" {
		t.Skip("needs a running platform (tests/loadgen/test_capacity_bench.py starts one)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	players := map[string]*testPlayer{
		"grpc": newTestPlayer(t, ctx, grpcTransport{gateways: []string{gateway}, sources: 1}),
		"web":  newTestPlayer(t, ctx, connectTransport{urls: []string{web}, sources: 1}),
	}
	for _, p := range players {
		defer p.close()
	}
	if transportOf(players["web"].conn.stream) != "web" || transportOf(players["grpc"].conn.stream) != "grpc" {
		t.Fatal("the players are not on the transports asked for")
	}
	same := func(what string, kinds map[string]string, refusals map[string]*playv1.Refusal) {
		g, w := refusals["grpc"], refusals["web"]
		if kinds["grpc"] == "" || kinds["grpc"] != kinds["web"] || g.GetReason() != w.GetReason() || g.GetReason() == "" {
			t.Fatalf("%s: gRPC %s %v, web %s %v", what, kinds["grpc"], g, kinds["web"], w)
		}
		t.Logf("%s: %s %s on both", what, kinds["web"], w.GetReason())
	}

	// Without a game: a move in one that does not exist.
	kinds, refusals := map[string]string{}, map[string]*playv1.Refusal{}
	for name, p := range players {
		if accepted, kind, refusal := p.submit(t, "no-such-game", 0); accepted == nil {
			kinds[name], refusals[name] = kind, refusal
		}
	}
	same("a move in no game", kinds, refusals)

	// The two meet in a game through their searches.
	type found struct {
		matched *playv1.MatchFound
		view    *playv1.GetGameResponse
		err     error
	}
	results := map[string]*found{}
	var wg sync.WaitGroup
	for name, p := range players {
		results[name] = &found{}
		wg.Add(1)
		go func(p *testPlayer, r *found, id string) {
			defer wg.Done()
			r.matched, r.view, r.err = p.search(id)
		}(p, results[name], fmt.Sprintf("t%s%d", name, time.Now().UnixNano()))
	}
	wg.Wait()
	for name, r := range results {
		if r.err != nil || r.matched == nil || r.view == nil {
			t.Fatalf("%s: no match (%v)", name, r.err)
		}
	}
	gameID := results["grpc"].matched.GetGameId()
	if results["web"].matched.GetGameId() != gameID {
		t.Fatalf("matched into different games: %s, %s", gameID, results["web"].matched.GetGameId())
	}
	status := results["grpc"].view.GetSummary().GetStatus()
	if status.GetVersion() != results["web"].view.GetSummary().GetStatus().GetVersion() {
		t.Fatalf("the two views differ: %v, %v", status, results["web"].view.GetSummary().GetStatus())
	}

	// Each, on its turn, moves against a version the game is not at, then moves.
	kinds, refusals = map[string]string{}, map[string]*playv1.Refusal{}
	for turn := 0; turn < 2; turn++ {
		var name string
		for n, r := range results {
			if toAct(status, r.matched.GetSeat()) {
				name = n
			}
		}
		if name == "" || kinds[name] != "" {
			t.Fatalf("turn %d: whose turn? %v", turn, status)
		}
		p := players[name]
		accepted, kind, refusal := p.submit(t, gameID, status.GetVersion()+5)
		if accepted != nil {
			t.Fatalf("%s: a move against a stale version accepted", name)
		}
		kinds[name], refusals[name] = kind, refusal
		if refusal.GetCurrentVersion() != status.GetVersion() {
			t.Fatalf("%s: current version %d, the game is at %d", name, refusal.GetCurrentVersion(), status.GetVersion())
		}
		if accepted, _, refusal = p.submit(t, gameID, status.GetVersion()); accepted == nil {
			t.Fatalf("%s: its move refused: %v", name, refusal)
		}
		status = accepted.GetStatus()
	}
	same("a move against a stale version", kinds, refusals)
}

// A Connect error's JSON (unary) and end-of-stream message (streams) read as the gRPC status and
// the Refusal the Play stream would send, with ErrorInfo's reason and current_version.
func TestConnectErrorsReadAsGRPCStatuses(t *testing.T) {
	var entry []byte
	entry = protowire.AppendTag(entry, 1, protowire.BytesType)
	entry = protowire.AppendString(entry, "current_version")
	entry = protowire.AppendTag(entry, 2, protowire.BytesType)
	entry = protowire.AppendString(entry, "7")
	var info []byte
	info = protowire.AppendTag(info, 1, protowire.BytesType)
	info = protowire.AppendString(info, "VERSION_MISMATCH")
	info = protowire.AppendTag(info, 2, protowire.BytesType)
	info = protowire.AppendString(info, "tafel.games")
	info = protowire.AppendTag(info, 3, protowire.BytesType)
	info = protowire.AppendBytes(info, entry)
	for _, encoding := range []*base64.Encoding{base64.RawStdEncoding, base64.StdEncoding} {
		body := `{"code":"aborted","message":"moved on","details":[{"type":"google.rpc.ErrorInfo","value":"` + encoding.EncodeToString(info) + `"}]}`
		err := httpError(409, []byte(body)).(*edgeError)
		want := &playv1.Refusal{Code: int32(codes.Aborted), Reason: "VERSION_MISMATCH", Message: "moved on", CurrentVersion: 7}
		if got := err.refusal(); !reflect.DeepEqual(got.String(), want.String()) || err.GRPCStatus().Code() != codes.Aborted {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	end := endOfStream([]byte(`{"error":{"code":"canceled","message":"gone"}}`)).(*edgeError)
	if end.code != codes.Canceled || end.refusal().GetReason() != "CANCELLED" {
		t.Fatalf("end of stream: %v", end)
	}
	if endOfStream([]byte(`{}`)) != nil {
		t.Fatal("a clean end read as an error")
	}
	if code := httpError(503, []byte("busy")).(*edgeError).code; code != codes.Unavailable {
		t.Fatalf("HTTP 503 without a Connect body: %v", code)
	}
}
