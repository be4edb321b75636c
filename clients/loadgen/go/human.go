// The capacity scenario (`--capacity`; tools/bench_capacity.py drives it): players at a person's
// pace rather than a closed loop, added while it runs, for "how many people one machine holds"
// (docs/benchmarks.md, "Capacity at human pace").
//
// Each player signs in as a guest on a connection of its own and keeps its Play stream open for
// the whole run, between games too. A player searches (Connect Four, a per-move clock on every
// search), plays its game with a think time drawn before each move (thinker below), pauses a
// drawn moment when the game ends and searches again. A share of the players (--spectators)
// spectate instead: the newest live games (ListLiveGames), one watched through the Play stream
// until it ends, then another. The players' logic speaks PlayRequest/PlayResponse through
// transport.go's interfaces only.
//
// A player whose stream fails (its gateway killed, or stopping: it says `reconnect`) opens a new
// one on the next gateway with the same session, as the Python SDK does, and takes up what it was
// doing: its search sent again with its request id, its game watched again from where it stands,
// its move in flight sent again with its request id and expected version (applied at most once).
// The time from the failure to the game's view on the new stream is measured (tools/bench_herd.py,
// docs/benchmarks.md, "The herd").
package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	connect4v1 "tafel.dev/gen/tafel/connect4/v1"
	gamesv1 "tafel.dev/gen/tafel/games/v1"
	playv1 "tafel.dev/gen/tafel/play/v1"
)

// thinker: a person's think time before a move, log-normal (most moves quick, a long tail),
// capped below the per-move clock so that the model itself never loses a game on time. The
// median is solved for so that the capped draws have the asked mean.
type thinker struct {
	mu    float64 // ln(median)
	sigma float64
	cap   float64 // seconds
}

// cappedMean: E[min(X, cap)] for X log-normal(mu, sigma).
func cappedMean(mu, sigma, cap float64) float64 {
	phi := func(x float64) float64 { return 0.5 * (1 + math.Erf(x/math.Sqrt2)) }
	lc := math.Log(cap)
	return math.Exp(mu+sigma*sigma/2)*phi((lc-mu-sigma*sigma)/sigma) + cap*(1-phi((lc-mu)/sigma))
}

func newThinker(mean, sigma, cap float64) (thinker, error) {
	if mean <= 0 || sigma <= 0 || cap <= mean {
		return thinker{}, fmt.Errorf("think: mean > 0, sigma > 0 and cap > mean (mean %gs, cap %gs)", mean, cap)
	}
	lo, hi := math.Log(mean)-20, math.Log(cap)+20
	for i := 0; i < 200; i++ {
		mid := (lo + hi) / 2
		if cappedMean(mid, sigma, cap) < mean {
			lo = mid
		} else {
			hi = mid
		}
	}
	return thinker{mu: (lo + hi) / 2, sigma: sigma, cap: cap}, nil
}

func (t thinker) median() float64 { return math.Exp(t.mu) }

func (t thinker) draw(rng *rand.Rand) time.Duration {
	s := math.Min(math.Exp(t.mu+t.sigma*rng.NormFloat64()), t.cap)
	return time.Duration(s * float64(time.Second))
}

type capacityConfig struct {
	think       thinker
	pause       time.Duration // mean pause between games (uniform, half to one and a half of it)
	perMove     time.Duration // the per-move clock of every search
	spectators  float64       // share of the players who spectate
	connectRate int           // players started a second
	sources     int           // loopback source addresses (transport.go)
	seed        int64
}

type capacity struct {
	cfg       capacityConfig
	transport transport
	ctx       context.Context
	tally     *tally
	out       *out

	players   int64 // added so far
	connected int64 // with a Play stream open
	inGame    int64 // players in a game now
	watching  int64 // spectators watching a game now
	liveGames int64 // games with their seat-0 player in them now
	submittedMoves
	launchMu   sync.Mutex
	launchWant int64 // players asked for ("add"), started at cfg.connectRate
	lostNow    int64 // players whose stream failed and who are not back yet
	people     sync.WaitGroup
	ledger     *ledger // nil unless asked for ("ledger on")
}

// sleep: false when the run stopped meanwhile.
func (c *capacity) sleep(d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-c.ctx.Done():
		return false
	}
}

func (c *capacity) fail(err error) {
	if c.ctx.Err() != nil {
		return // the run stopped under it
	}
	c.tally.fail(codeName(status.Code(err)))
}

// spectator: whether player i spectates, so that the share holds at every count.
func (c *capacity) spectator(i int64) bool {
	s := c.cfg.spectators
	return math.Floor(float64(i+1)*s) > math.Floor(float64(i)*s)
}

// person: one player for the whole run; a failed sign-in is counted and tried again, a failed
// stream is counted and reopened (on the next gateway when the transport offers it), and what the
// player was doing resumed on it.
func (c *capacity) person(index int64) {
	defer c.people.Done()
	h := &human{index: index, rng: rand.New(rand.NewSource(c.cfg.seed*1_000_000 + index))}
	var sess session
	for c.ctx.Err() == nil {
		var err error
		if sess, err = c.transport.signIn(c.ctx, int(index)); err == nil {
			break
		}
		c.fail(err)
		if !c.sleep(time.Second) {
			return
		}
	}
	if sess == nil {
		return
	}
	defer sess.close()
	defer c.left(h)
	mover, moves := sess.(failoverSession)
	failures := 0
	for c.ctx.Err() == nil {
		conn, err := c.open(sess, mover, h)
		if err == nil {
			failures = 0
			atomic.AddInt64(&c.connected, 1)
			if c.spectator(index) {
				err = c.spectate(sess, conn, h)
			} else {
				err = c.play(conn, h)
			}
			atomic.AddInt64(&c.connected, -1)
		}
		if c.ctx.Err() != nil {
			return
		}
		if err == nil {
			continue
		}
		if h.lostAt.IsZero() {
			h.lostAt = time.Now()
			atomic.AddInt64(&c.lostNow, 1)
			kind := codeName(status.Code(err))
			if errors.Is(err, errGatewayStopping) {
				kind = "RECONNECT" // a graceful stop's handover: not an error
			} else {
				c.fail(err)
			}
			c.tally.mu.Lock()
			c.tally.streamsLost[kind]++
			c.tally.mu.Unlock()
		}
		failures++
		if !moves {
			if !c.sleep(time.Second) {
				return
			}
			continue
		}
		if !c.sleep(reopenDelay(failures, h.rng)) {
			return
		}
		if err := mover.failover(c.ctx); err != nil {
			c.fail(err)
		}
		c.tally.mu.Lock()
		c.tally.failovers++
		c.tally.mu.Unlock()
	}
}

// pauseBetweenGames: a person's moment between games (and before the first search).
func (c *capacity) pauseBetweenGames(conn *playConn, rng *rand.Rand) (bool, error) {
	return c.wait(conn, time.Duration((0.5+rng.Float64())*float64(c.cfg.pause)))
}

// play: searches and games one after another on one stream, until the run stops or the stream
// fails; what it was doing when a stream failed is taken up again on this one.
func (c *capacity) play(conn *playConn, h *human) error {
	for {
		var watching *playv1.GetGameResponse
		if h.game == nil && h.found == nil {
			if h.search == nil {
				if going, err := c.pauseBetweenGames(conn, h.rng); !going || err != nil {
					return err
				}
				h.requests++
				h.search = &playv1.FindMatchRequest{
					Game: "connect4", MinSeats: 2, MaxSeats: 2, Watch: true,
					RequestId:   fmt.Sprintf("cap%d-%d-%x", c.cfg.seed, h.index, h.requests),
					TimeControl: &playv1.TimeControl{PerMove: durationpb.New(c.cfg.perMove)},
				}
				h.queued = time.Now()
			} else {
				c.count(func(t *tally) { t.searchesResent++ })
			}
			var err error
			if watching, err = c.findAndWatch(conn, h); err != nil {
				return err
			}
			if h.found == nil {
				continue // refused: counted; searched again after the pause
			}
			waited := time.Since(h.queued).Seconds()
			c.count(func(t *tally) { t.waits = append(t.waits, waited) })
		}
		if watching == nil {
			id := h.found.GetGameId()
			if h.game != nil {
				id = h.game.id // its game again, as it stands now
			}
			var err error
			if watching, err = watchGame(conn, id); err != nil {
				var refused refusal
				if !errors.As(err, &refused) {
					return err
				}
				c.fail(err) // the game cannot be watched: left
				h.found = nil
				c.endGame(h)
				continue
			}
		}
		if h.game == nil {
			h.game = gameFrom(h.found.GetGameId(), h.found.GetSeat(), watching)
			h.found = nil
			c.ledger.join(h.game.id, h.game.seat)
			atomic.AddInt64(&c.inGame, 1)
			if h.game.seat == 0 {
				atomic.AddInt64(&c.liveGames, 1)
			}
		} else {
			h.game.resume(watching)
		}
		if !h.lostAt.IsZero() {
			c.back(h, true)
		}
		if err := c.playGame(conn, h); err != nil {
			return err
		}
		c.endGame(h) // the game's watch ends with the game; the stream stays open for the next search
	}
}

func (c *capacity) endGame(h *human) {
	if h.game == nil {
		return
	}
	atomic.AddInt64(&c.inGame, -1)
	if h.game.seat == 0 {
		atomic.AddInt64(&c.liveGames, -1)
	}
	h.game, h.move, h.decideAt = nil, nil, time.Time{}
}

// gameFrom: a game as its view shows it (the board and the version it is at).
func gameFrom(id string, seat uint32, watching *playv1.GetGameResponse) *game {
	g := &game{id: id, seat: seat}
	g.resume(watching)
	return g
}

func (g *game) resume(watching *playv1.GetGameResponse) {
	view := watching.GetView().GetConnect4()
	g.rows, g.heights, g.open = view.GetRows(), nil, nil
	for col, column := range view.GetBoard() {
		g.heights = append(g.heights, uint32(len(column.GetSeats())))
		if uint32(len(column.GetSeats())) < g.rows {
			g.open = append(g.open, uint32(col))
		}
	}
	g.status = watching.GetSummary().GetStatus()
	g.board = g.status.GetVersion()
}

// findAndWatch: h.search sent (again, after a lost stream), until matched: h.found, and the
// game's first view when the search started its watch.
func (c *capacity) findAndWatch(conn *playConn, h *human) (*playv1.GetGameResponse, error) {
	if err := conn.send(&playv1.PlayRequest{Action: &playv1.PlayRequest_FindMatch{FindMatch: h.search}}); err != nil {
		return nil, err
	}
	correlation := conn.correlation
	for {
		response, err := conn.next()
		if err != nil {
			return nil, err
		}
		if response.GetCorrelationId() != correlation {
			continue // a finished game's leftovers
		}
		switch kind := response.GetKind().(type) {
		case *playv1.PlayResponse_Refusal:
			if h.found == nil {
				c.tally.fail(codeName(codes.Code(kind.Refusal.GetCode())))
				h.search = nil
			}
			return nil, nil // else the watch's refusal: the match stands, watch it ourselves
		case *playv1.PlayResponse_MatchUpdate:
			if found := kind.MatchUpdate.GetMatched(); found != nil && h.found == nil {
				h.found, h.search = found, nil
				if !found.GetWatchStarted() {
					return nil, nil
				}
			}
		case *playv1.PlayResponse_Watching:
			return kind.Watching, nil
		}
	}
}

// watchGame: a watch on the stream and its answer (a refusal is returned as a refusal error).
func watchGame(conn *playConn, gameID string) (*playv1.GetGameResponse, error) {
	request := &playv1.PlayRequest_Watch{Watch: &playv1.WatchGameRequest{GameId: gameID}}
	if err := conn.send(&playv1.PlayRequest{Action: request}); err != nil {
		return nil, err
	}
	correlation := conn.correlation
	for {
		response, err := conn.next()
		if err != nil {
			return nil, err
		}
		if response.GetCorrelationId() != correlation {
			continue
		}
		if r := response.GetRefusal(); r != nil {
			return nil, refusal{status.New(codes.Code(r.GetCode()), r.GetReason())}
		}
		if watching := response.GetWatching(); watching != nil {
			return watching, nil
		}
	}
}

func (c *capacity) playGame(conn *playConn, h *human) error {
	g := h.game
	if h.move != nil {
		c.count(func(t *tally) { t.movesResent++ })
		if done, err := c.submit(conn, h); err != nil || !done {
			return err
		}
	}
	for !g.status.GetOver() {
		if !toAct(g.status, g.seat) {
			response, err := conn.next()
			if err != nil {
				return err
			}
			c.handle(conn, g, response)
			continue
		}
		if h.decideAt.IsZero() || h.decideFor != g.status.GetVersion() {
			think := c.cfg.think.draw(h.rng)
			c.count(func(t *tally) {
				t.thinkSum += think.Seconds()
				t.thinks++
				t.thinkMax = math.Max(t.thinkMax, think.Seconds())
			})
			h.decideAt, h.decideFor = time.Now().Add(think), g.status.GetVersion()
		}
		if going, err := c.wait(conn, time.Until(h.decideAt)); !going || err != nil {
			return err
		}
		h.decideAt = time.Time{}
		if len(g.open) == 0 {
			c.tally.fail("NO_LEGAL_COLUMN")
			return nil
		}
		h.requests++
		column := g.open[h.rng.Intn(len(g.open))]
		c.markSubmitted(moveKey{g.id, g.status.GetVersion() + 1}, time.Now())
		h.move = &playv1.SubmitMoveRequest{
			GameId: g.id, ExpectedVersion: g.status.GetVersion(),
			Move:      &gamesv1.GameMove{Game: &gamesv1.GameMove_Connect4{Connect4: &connect4v1.Move{Column: column}}},
			RequestId: fmt.Sprintf("cap%d-%d-%x", c.cfg.seed, h.index, h.requests),
		}
		if done, err := c.submit(conn, h); err != nil || !done {
			return err // refused (counted): the game is left, as a person whose move failed would reload
		}
	}
	if g.seat == 0 {
		c.count(func(t *tally) {
			t.finished++
			if g.status.GetOutcome().GetReason() == "TIMEOUT" {
				t.timedOut++
				t.errors["GAME_TIMED_OUT"]++
				t.errorsTotal++
			}
		})
	}
	return nil
}

// submit: h.move sent and answered; false when refused (counted). A stream failing under it
// keeps h.move, for the next stream to send again.
func (c *capacity) submit(conn *playConn, h *human) (bool, error) {
	g, move := h.game, h.move
	if err := conn.send(&playv1.PlayRequest{Action: &playv1.PlayRequest_SubmitMove{SubmitMove: move}}); err != nil {
		return false, err
	}
	accepted, err := c.answer(conn, g, conn.correlation)
	if err != nil {
		return false, err
	}
	h.move = nil
	if accepted == nil {
		return false, nil
	}
	c.ledger.sent(g.id, g.seat, move, true)
	c.count(func(t *tally) {
		t.moves++
		t.ticks++
	})
	if accepted.GetVersion() > g.board { // not yet seen in an event or a resumed view
		g.drop(move.GetMove().GetConnect4().GetColumn())
		g.board = accepted.GetVersion()
	}
	if accepted.GetStatus().GetVersion() >= g.status.GetVersion() {
		g.status = accepted.GetStatus()
	}
	return true, nil
}

func (c *capacity) answer(conn *playConn, g *game, correlation uint64) (*playv1.SubmitMoveResponse, error) {
	for {
		response, err := conn.next()
		if err != nil {
			return nil, err
		}
		if response.GetCorrelationId() != correlation {
			c.handle(conn, g, response)
			continue
		}
		if refusal := response.GetRefusal(); refusal != nil {
			c.tally.fail(codeName(codes.Code(refusal.GetCode())))
			return nil, nil
		}
		if accepted := response.GetMoveAccepted(); accepted != nil {
			return accepted, nil
		}
	}
}

// handle: a disc (the opponent's: its latency, submit until this stream has it) or the game's
// status; a disc the board already has (its version seen in a resumed view) is not dropped twice.
func (c *capacity) handle(conn *playConn, g *game, response *playv1.PlayResponse) {
	delivery := response.GetEvent()
	if delivery == nil || delivery.GetGameId() != g.id {
		return
	}
	event := delivery.GetEvent()
	if dropped := event.GetConnect4().GetDiscDropped(); dropped != nil && event.GetVersion() > g.board {
		g.drop(dropped.GetColumn())
		g.board = event.GetVersion()
		if dropped.GetSeat() != g.seat {
			if started, ok := c.takeSubmitted(moveKey{g.id, event.GetVersion()}); ok {
				latency, by := time.Since(started).Seconds(), transportOf(conn.stream)
				c.count(func(t *tally) {
					t.latencies = append(t.latencies, latency)
					t.latencyBy[by] = append(t.latencyBy[by], latency)
				})
			}
		}
	}
	if next := delivery.GetStatus(); next != nil && next.GetVersion() >= g.status.GetVersion() {
		g.status = next
	}
}

// spectate: the newest live games, one watched until it ends, then another, on one stream.
func (c *capacity) spectate(sess session, conn *playConn, h *human) error {
	rng := h.rng
	for {
		if going, err := c.pauseBetweenGames(conn, rng); !going || err != nil {
			return err
		}
		games, err := sess.liveGames(c.ctx, "connect4", 50)
		if err != nil {
			return err
		}
		var live []string
		for _, summary := range games {
			if !summary.GetStatus().GetOver() {
				live = append(live, summary.GetGameId())
			}
		}
		if len(live) == 0 {
			continue // none yet: look again after the pause
		}
		id := live[rng.Intn(len(live))]
		watching, err := watchGame(conn, id)
		if err != nil {
			var refused refusal
			if !errors.As(err, &refused) {
				return err // the stream's
			}
			if status.Code(err) != codes.NotFound { // NOT_FOUND: gone between the list and the watch
				c.fail(err)
			}
			continue
		}
		over := watching.GetSummary().GetStatus().GetOver()
		atomic.AddInt64(&c.watching, 1)
		for !over {
			response, err := conn.next()
			if err != nil {
				atomic.AddInt64(&c.watching, -1)
				return err
			}
			if delivery := response.GetEvent(); delivery != nil && delivery.GetGameId() == id {
				over = delivery.GetStatus().GetOver() || delivery.GetEvent().GetEnded() != nil
			}
		}
		atomic.AddInt64(&c.watching, -1)
		c.tally.mu.Lock()
		c.tally.watched++
		c.tally.mu.Unlock()
		stop := &playv1.PlayRequest_StopWatching{StopWatching: &playv1.StopWatching{GameId: id}}
		if err := conn.send(&playv1.PlayRequest{Action: stop}); err != nil {
			return err
		}
	}
}
