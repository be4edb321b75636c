package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	connect4v1 "tafel.dev/gen/tafel/connect4/v1"
	gamesv1 "tafel.dev/gen/tafel/games/v1"
	playv1 "tafel.dev/gen/tafel/play/v1"
)

// codeNames: google.rpc.Code as the Python load generator names errors (grpc.StatusCode's names).
var codeNames = [...]string{
	"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
	"ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
	"OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
}

func codeName(code codes.Code) string {
	if int(code) < len(codeNames) {
		return codeNames[code]
	}
	return fmt.Sprintf("CODE_%d", code)
}

type moveKey struct {
	game    string
	version uint64
}

type run struct {
	gateways []string
	think    time.Duration
	seed     int64
	window   *window
	out      *out

	submittedMoves
}

// submittedMoves: when the mover sent the move that makes each version, until the opponent's stream
// has it (the latency is measured there); both scenarios' players share one per process.
type submittedMoves struct {
	submitMu  sync.Mutex
	submitted map[moveKey]time.Time
}

func (s *submittedMoves) markSubmitted(key moveKey, at time.Time) {
	s.submitMu.Lock()
	if s.submitted == nil {
		s.submitted = map[moveKey]time.Time{}
	}
	s.submitted[key] = at
	s.submitMu.Unlock()
}

func (s *submittedMoves) takeSubmitted(key moveKey) (time.Time, bool) {
	s.submitMu.Lock()
	at, ok := s.submitted[key]
	delete(s.submitted, key)
	s.submitMu.Unlock()
	return at, ok
}

// errStopped: the run ended under a player (its context's deadline), which is not an error.
var errStopped = errors.New("stopped")

// player: sign in, then play games one after another on one Play stream until the window ends.
func (r *run) player(index int, res *result) {
	// Every call ends by the window's end + grace: a player waiting for an opponent who stopped
	// with the run is let go then.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-r.window.opened
		select {
		case <-time.After(time.Until(r.window.end.Add(grace))):
			cancel()
		case <-ctx.Done():
		}
	}()
	p := &player{run: r, res: res, index: index, rng: rand.New(rand.NewSource(r.seed*100_000 + int64(index)))}
	// A ClientConn of its own is a TCP connection of its own (grpc-go shares none between them).
	// Fixed flow-control windows turn off BDP probing, as the Python SDK's channels do.
	conn, err := grpc.DialContext(ctx, r.gateways[index%len(r.gateways)], grpc.WithInsecure(),
		grpc.WithInitialWindowSize(1<<16), grpc.WithInitialConnWindowSize(1<<16),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(codec{})))
	if err != nil {
		p.fail(ctx, err)
		return
	}
	defer conn.Close()
	signIn, err := playv1.NewAccountServiceClient(conn).SignInAsGuest(ctx, &playv1.SignInAsGuestRequest{})
	if err != nil {
		p.fail(ctx, err)
		return
	}
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+signIn.GetSession().GetToken())
	games := playv1.NewGameServiceClient(conn)
	first := true
	for !r.window.over(time.Now()) {
		// A stream that failed is counted and replaced, as a client reconnects.
		err := p.playOn(ctx, games, &first)
		if err == nil || errors.Is(err, errStopped) || ctx.Err() != nil {
			return
		}
		p.fail(ctx, err)
		time.Sleep(200 * time.Millisecond) // a gateway refusing every stream must not be spun on
	}
}

type player struct {
	run   *run
	res   *result
	index int
	rng   *rand.Rand

	*playConn // the Play stream now (human.go: batches unpacked, correlation ids)
	requests  uint64
}

func (p *player) fail(ctx context.Context, err error) {
	if ctx.Err() != nil && p.run.window.isOpen() {
		return // the run ended under it
	}
	p.res.Errors[codeName(status.Code(err))]++
}

func (p *player) send(request *playv1.PlayRequest) (uint64, error) {
	err := p.playConn.send(request)
	return p.correlation, err
}

func (p *player) requestID() string {
	p.requests++
	return fmt.Sprintf("lg%d-%d-%x", p.run.seed, p.index, p.requests)
}

// playOn: one Play stream, its games one after another until the window ends.
func (p *player) playOn(ctx context.Context, games playv1.GameServiceClient, first *bool) error {
	streamCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := games.Play(streamCtx)
	if err != nil {
		return err
	}
	p.playConn = &playConn{stream: stream}
	options := &playv1.PlayRequest_SetOptions{SetOptions: &playv1.PlayOptions{BatchResponses: true}}
	if _, err := p.send(&playv1.PlayRequest{Action: options}); err != nil {
		return err
	}
	for !p.run.window.over(time.Now()) {
		queued := time.Now()
		matched, watching, err := p.findAndWatch()
		if err != nil {
			return err
		}
		if matched == nil { // refused: counted, backed off, searched again
			continue
		}
		waited := time.Since(queued).Seconds()
		if *first {
			*first = false
			p.res.FirstMatchmaking = append(p.res.FirstMatchmaking, waited)
			p.run.out.line("matched")
		} else if p.run.window.inside(time.Now()) {
			p.res.Matchmaking = append(p.res.Matchmaking, waited)
		}
		if err := p.playConnect4(matched, watching); err != nil {
			return err
		}
	}
	return errStopped
}

// findAndWatch: a search that starts the game's watch; its MatchFound, then the game's first view.
func (p *player) findAndWatch() (*playv1.MatchFound, *playv1.GetGameResponse, error) {
	search := &playv1.FindMatchRequest{Game: "connect4", MinSeats: 2, MaxSeats: 2, RequestId: p.requestID(), Watch: true}
	correlation, err := p.send(&playv1.PlayRequest{Action: &playv1.PlayRequest_FindMatch{FindMatch: search}})
	if err != nil {
		return nil, nil, err
	}
	var matched *playv1.MatchFound
	for {
		response, err := p.next()
		if err != nil {
			return nil, nil, err
		}
		if response.GetCorrelationId() != correlation {
			continue // a finished game's leftovers
		}
		switch kind := response.GetKind().(type) {
		case *playv1.PlayResponse_Refusal:
			if matched != nil { // the watch's refusal: the match stands, watch it ourselves
				view, err := p.watch(matched.GetGameId())
				return matched, view, err
			}
			p.res.Errors[codeName(codes.Code(kind.Refusal.GetCode()))]++
			time.Sleep(200 * time.Millisecond)
			return nil, nil, nil
		case *playv1.PlayResponse_MatchUpdate:
			if found := kind.MatchUpdate.GetMatched(); found != nil && matched == nil {
				matched = found
				if !found.GetWatchStarted() {
					view, err := p.watch(found.GetGameId())
					return found, view, err
				}
			}
		case *playv1.PlayResponse_Watching:
			return matched, kind.Watching, nil
		}
	}
}

// watch: a watch of our own (a gateway that did not start one with the match).
func (p *player) watch(gameID string) (*playv1.GetGameResponse, error) {
	request := &playv1.PlayRequest_Watch{Watch: &playv1.WatchGameRequest{GameId: gameID}}
	correlation, err := p.send(&playv1.PlayRequest{Action: request})
	if err != nil {
		return nil, err
	}
	for {
		response, err := p.next()
		if err != nil {
			return nil, err
		}
		if response.GetCorrelationId() != correlation {
			continue
		}
		if refusal := response.GetRefusal(); refusal != nil {
			return nil, status.Error(codes.Code(refusal.GetCode()), refusal.GetReason())
		}
		if watching := response.GetWatching(); watching != nil {
			return watching, nil
		}
	}
}

// game: one Connect Four game as this player sees it.
type game struct {
	id      string
	seat    uint32
	rows    uint32
	heights []uint32
	open    []uint32 // columns not full, kept rather than rebuilt each move
	status  *gamesv1.GameStatus
	board   uint64 // the version the heights are at (human.go: a resumed view has some discs already)
}

func (g *game) drop(column uint32) {
	if int(column) >= len(g.heights) {
		return
	}
	g.heights[column]++
	if g.heights[column] == g.rows {
		for i, c := range g.open {
			if c == column {
				g.open = append(g.open[:i], g.open[i+1:]...)
				break
			}
		}
	}
}

func (p *player) playConnect4(matched *playv1.MatchFound, watching *playv1.GetGameResponse) error {
	if watching == nil {
		var err error
		if watching, err = p.watch(matched.GetGameId()); err != nil {
			return err
		}
	}
	view := watching.GetView().GetConnect4()
	g := &game{id: matched.GetGameId(), seat: matched.GetSeat(), rows: view.GetRows(), status: watching.GetSummary().GetStatus()}
	for c, column := range view.GetBoard() {
		g.heights = append(g.heights, uint32(len(column.GetSeats())))
		if uint32(len(column.GetSeats())) < g.rows {
			g.open = append(g.open, uint32(c))
		}
	}
	window := p.run.window
	for !g.status.GetOver() {
		if !toAct(g.status, g.seat) {
			response, err := p.next()
			if err != nil {
				return err
			}
			p.handle(g, response)
			continue
		}
		if window.over(time.Now()) {
			return errStopped // the run is over: stop moving
		}
		if p.run.think > 0 {
			time.Sleep(p.run.think)
		}
		if len(g.open) == 0 {
			p.res.Errors["NO_LEGAL_COLUMN"]++
			return nil
		}
		column := g.open[p.rng.Intn(len(g.open))]
		p.run.markSubmitted(moveKey{g.id, g.status.GetVersion() + 1}, time.Now())
		move := &gamesv1.GameMove{Game: &gamesv1.GameMove_Connect4{Connect4: &connect4v1.Move{Column: column}}}
		submit := &playv1.SubmitMoveRequest{GameId: g.id, ExpectedVersion: g.status.GetVersion(), RequestId: p.requestID(), Move: move}
		correlation, err := p.send(&playv1.PlayRequest{Action: &playv1.PlayRequest_SubmitMove{SubmitMove: submit}})
		if err != nil {
			return err
		}
		accepted, err := p.answer(g, correlation)
		if err != nil || accepted == nil {
			return err
		}
		p.res.MovesWholeRun++
		if window.inside(time.Now()) {
			p.res.Moves++
		}
		g.drop(column)
		if accepted.GetStatus().GetVersion() >= g.status.GetVersion() {
			g.status = accepted.GetStatus()
		}
	}
	if window.inside(time.Now()) && g.seat == 0 {
		p.res.GamesFinished++
	}
	return nil
}

// answer: the submit's answer (nil after a refusal, which is counted), handling what comes first.
func (p *player) answer(g *game, correlation uint64) (*playv1.SubmitMoveResponse, error) {
	for {
		response, err := p.next()
		if err != nil {
			return nil, err
		}
		if response.GetCorrelationId() != correlation {
			p.handle(g, response)
			continue
		}
		if refusal := response.GetRefusal(); refusal != nil {
			p.res.Errors[codeName(codes.Code(refusal.GetCode()))]++
			return nil, nil
		}
		if accepted := response.GetMoveAccepted(); accepted != nil {
			return accepted, nil
		}
	}
}

// handle: an event of the game (the opponent's disc: its latency), or another game's leftovers.
func (p *player) handle(g *game, response *playv1.PlayResponse) {
	delivery := response.GetEvent()
	if delivery == nil || delivery.GetGameId() != g.id {
		return
	}
	event := delivery.GetEvent()
	if dropped := event.GetConnect4().GetDiscDropped(); dropped != nil && dropped.GetSeat() != g.seat {
		g.drop(dropped.GetColumn())
		started, ok := p.run.takeSubmitted(moveKey{g.id, event.GetVersion()})
		if now := time.Now(); ok && p.run.window.inside(now) {
			p.res.Latencies = append(p.res.Latencies, now.Sub(started).Seconds())
		}
	}
	if next := delivery.GetStatus(); next != nil && next.GetVersion() >= g.status.GetVersion() {
		g.status = next
	}
}

func toAct(s *gamesv1.GameStatus, seat uint32) bool {
	for _, s := range s.GetToAct() {
		if s == seat {
			return true
		}
	}
	return false
}
