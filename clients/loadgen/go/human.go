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
//
// Lines between it and its parent:
//
//	stdin  "add N"           N more players (started at --connect-rate a second)
//	stdin  "mark"            a measured window starts now (its counters are reset)
//	stdin  "report"          stdout "report {json}": the window since "mark" (capacityReport)
//	stdin  "ledger on"       before any player is added: keep every move the players send
//	stdin  "ledger"          every player stops; stdout "ledger {json}": each game's seats, the
//	                         [version, column] of every move answered OK or never answered
//	stdin  "stop" or EOF     every player stops; stdout "stopped", and the program exits
//	stdout "tick {json}"     each second: players, connected, in games, watching, live games, moves that
//	                         second, errors so far, players whose stream failed and who are not back yet
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand"
	"os"
	"sort"
	"strconv"
	"strings"
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

// tally: what the players measured, since the last "mark" (the window) and since the last tick.
type tally struct {
	mu          sync.Mutex
	marked      time.Time
	cpuAtMark   time.Duration
	moves       int
	latencies   []float64
	waits       []float64 // matchmaking: search until the match and the game's first view
	errors      map[string]int
	finished    int // games ended (counted by seat 0)
	timedOut    int // games ended by the clock, which the model never lets run out
	watched     int // games a spectator watched to their end
	ticks       int // moves since the last tick
	thinkSum    float64
	thinkMax    float64
	thinks      int
	errorsTotal int

	// The latencies again by transport (transportOf the stream that delivered the move).
	latencyBy map[string][]float64

	// Streams lost (a gateway gone: tools/bench_herd.py) and how the players came back.
	streamsLost    map[string]int // players whose stream failed, by its status ("RECONNECT": a graceful stop)
	failovers      int            // moves to the next gateway (a player may need several)
	back           []float64      // stream failed -> its game's view again, or a stream that answers
	resumes        []float64      // the same, for the players who were in a game
	movesResent    int            // moves in flight when a stream failed, sent again
	searchesResent int            // searches waiting when a stream failed, sent again
}

func (t *tally) fail(kind string) {
	t.mu.Lock()
	t.errors[kind]++
	t.errorsTotal++
	t.mu.Unlock()
}

type capacity struct {
	cfg       capacityConfig
	transport transport
	ctx       context.Context
	tally     *tally
	out       *out

	players    int64 // added so far
	connected  int64 // with a Play stream open
	inGame     int64 // players in a game now
	watching   int64 // spectators watching a game now
	liveGames  int64 // games with their seat-0 player in them now
	submitMu   sync.Mutex
	submitted  map[moveKey]time.Time
	launchMu   sync.Mutex
	launchWant int64 // players asked for ("add"), started at cfg.connectRate
	lostNow    int64 // players whose stream failed and who are not back yet
	people     sync.WaitGroup
	ledger     *ledger // nil unless asked for ("ledger on")
}

// ledger: every move each player sent in each game it sat in, answered OK or never answered (the
// run stopped first), for checking them against the games' records (tools/bench_herd.py).
type ledger struct {
	mu    sync.Mutex
	games map[string]map[uint32]*seatMoves
}

type seatMoves struct {
	Acked      [][2]uint64 `json:"acked"`      // [version, column] of each move answered OK
	Unanswered [][2]uint64 `json:"unanswered"` // [version, column] of a move whose answer never came
}

func (l *ledger) join(game string, seat uint32) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.games[game] == nil {
		l.games[game] = map[uint32]*seatMoves{}
	}
	if l.games[game][seat] == nil {
		l.games[game][seat] = &seatMoves{Acked: [][2]uint64{}, Unanswered: [][2]uint64{}}
	}
}

func (l *ledger) sent(game string, seat uint32, move *playv1.SubmitMoveRequest, acked bool) {
	if l == nil {
		return
	}
	l.join(game, seat)
	l.mu.Lock()
	defer l.mu.Unlock()
	entry := [2]uint64{move.GetExpectedVersion() + 1, uint64(move.GetMove().GetConnect4().GetColumn())}
	if moves := l.games[game][seat]; acked {
		moves.Acked = append(moves.Acked, entry)
	} else {
		moves.Unanswered = append(moves.Unanswered, entry)
	}
}

func (c *capacity) markSubmitted(key moveKey, at time.Time) {
	c.submitMu.Lock()
	c.submitted[key] = at
	c.submitMu.Unlock()
}

func (c *capacity) takeSubmitted(key moveKey) (time.Time, bool) {
	c.submitMu.Lock()
	at, ok := c.submitted[key]
	delete(c.submitted, key)
	c.submitMu.Unlock()
	return at, ok
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

// human: what a player carries from one Play stream to the next when its gateway goes away (the
// search it sent, the match or game it is in, the move in flight), so that a stream on another
// gateway resumes them, as the Python SDK's PlayStream does, instead of abandoning the game.
type human struct {
	index  int64
	rng    *rand.Rand
	search *playv1.FindMatchRequest // sent, not yet matched: sent again as is (its request id takes over its ticket)
	queued time.Time                // when that search was first sent
	found  *playv1.MatchFound       // matched, the game's view not yet had
	game   *game                    // the game played now; nil between games
	// Sent, not yet answered: sent again as is, with its request id and expected version, so that
	// the game applies it once whether or not the first one reached it.
	move *playv1.SubmitMoveRequest
	// When it moves at this version: a person thinking through a lost connection moves when
	// decided, the outage included, rather than starting to think again.
	decideAt  time.Time
	decideFor uint64
	lostAt    time.Time // when its stream failed; zero while it has one
	requests  uint64    // request ids: unique over the player's streams
}

// failoverSession: what a transport may offer for a gateway that goes away (grpcTransport does):
// the session moved to the next gateway with the same token, and a channel closed once the
// connection is lost, so that a player thinking or pausing (not reading) notices at once, as a
// client with a reader would. A session without it reopens its stream where it is.
type failoverSession interface {
	failover(ctx context.Context) error
	lost() <-chan struct{}
}

// The SDK's backoff between attempts to reopen a stream (clients/python/tafel/retry.py, Backoff).
const (
	reopenFirst = 100 * time.Millisecond
	reopenCap   = 2 * time.Second
)

func reopenDelay(failures int, rng *rand.Rand) time.Duration {
	d := reopenFirst << uint(failures-1)
	if failures > 5 || d > reopenCap {
		d = reopenCap
	}
	return time.Duration(float64(d) * (1 - 0.2*rng.Float64()))
}

var (
	errConnectionLost  = status.Error(codes.Unavailable, "the connection to the gateway was lost")
	errGatewayStopping = status.Error(codes.Unavailable, "the gateway is stopping (it said reconnect)")
	errStreamEnded     = status.Error(codes.Unavailable, "the play stream ended")
)

// refusal: a request of the stream refused (not the stream failing).
type refusal struct{ s *status.Status }

func (r refusal) Error() string              { return r.s.Err().Error() }
func (r refusal) GRPCStatus() *status.Status { return r.s }

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

// open: a Play stream with its options; after a lost one, its first answer (the gateway is there).
func (c *capacity) open(sess session, mover failoverSession, h *human) (*playConn, error) {
	stream, err := sess.play(c.ctx)
	if err != nil {
		return nil, err
	}
	conn := &playConn{stream: stream}
	if mover != nil {
		conn.lost = mover.lost()
		select {
		case <-conn.lost:
			// Its connection failed once already (gRPC may have dialled again since): a stream of
			// this session could not tell its own loss from that one's, so it moves on.
			return nil, errConnectionLost
		default:
		}
	}
	if err := conn.send(&playv1.PlayRequest{Action: &playv1.PlayRequest_SetOptions{SetOptions: &playv1.PlayOptions{BatchResponses: true}}}); err != nil {
		return nil, err
	}
	if h.lostAt.IsZero() {
		return conn, nil
	}
	for {
		response, err := conn.next()
		if err != nil {
			return nil, err
		}
		if response.GetOptionsSet() != nil {
			break
		}
	}
	if h.game == nil && h.found == nil {
		c.back(h, false) // a player in a game is back with its game's view
	}
	return conn, nil
}

// back: the player whose stream failed has its game's view again (inGame) or a stream that answers.
func (c *capacity) back(h *human, inGame bool) {
	took := time.Since(h.lostAt).Seconds()
	h.lostAt = time.Time{}
	atomic.AddInt64(&c.lostNow, -1)
	c.tally.mu.Lock()
	c.tally.back = append(c.tally.back, took)
	if inGame {
		c.tally.resumes = append(c.tally.resumes, took)
	}
	c.tally.mu.Unlock()
}

// left: the player stops with the run; a move still unanswered may or may not be in its game.
func (c *capacity) left(h *human) {
	if h.game != nil {
		if h.move != nil {
			c.ledger.sent(h.game.id, h.game.seat, h.move, false)
		}
		c.endGame(h)
	}
}

// playConn: one Play stream with its batches unpacked and its correlation ids.
type playConn struct {
	stream      playStream
	pending     []*playv1.PlayResponse
	correlation uint64
	lost        <-chan struct{} // closed when the connection is lost (nil: never told)
	reconnect   bool            // the gateway said it is stopping
}

func (p *playConn) next() (*playv1.PlayResponse, error) {
	for {
		for len(p.pending) == 0 {
			response, err := p.stream.Recv()
			if err != nil {
				return nil, p.ended(err)
			}
			if batch := response.GetBatch(); batch != nil {
				p.pending = append(p.pending, batch.GetResponses()...)
			} else {
				p.pending = append(p.pending, response)
			}
		}
		response := p.pending[0]
		p.pending[0] = nil
		p.pending = p.pending[1:]
		if response.GetReconnect() != nil {
			p.reconnect = true // the stream ends next; what is unanswered goes to another gateway
			continue
		}
		return response, nil
	}
}

// ended: why the stream ended, from Recv's error (io.EOF: the gateway ended it with OK).
func (p *playConn) ended(err error) error {
	if err != io.EOF {
		return err
	}
	if p.reconnect {
		return errGatewayStopping
	}
	return errStreamEnded
}

func (p *playConn) send(request *playv1.PlayRequest) error {
	p.correlation++
	request.CorrelationId = p.correlation
	if err := p.stream.Send(request); err != io.EOF {
		return err
	}
	// grpc-go's Send says only io.EOF on a stream that ended: its status comes from Recv.
	for {
		if _, err := p.next(); err != nil {
			return err
		}
	}
}

// wait: d unless the run stops (false) or the connection is lost (errConnectionLost).
func (c *capacity) wait(conn *playConn, d time.Duration) (bool, error) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true, nil
	case <-c.ctx.Done():
		return false, nil
	case <-conn.lost:
		// What the stream still holds is read to its end: a gateway stopping gracefully said
		// `reconnect` there before it closed the connection.
		for {
			if _, err := conn.next(); err != nil {
				if err == errStreamEnded {
					err = errConnectionLost
				}
				return true, err
			}
		}
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

func (c *capacity) count(f func(*tally)) {
	c.tally.mu.Lock()
	f(c.tally)
	c.tally.mu.Unlock()
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

// launcher: starts the players asked for, at cfg.connectRate a second.
func (c *capacity) launcher() {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	perTick := int64(c.cfg.connectRate / 10)
	if perTick < 1 {
		perTick = 1
	}
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-tick.C:
		}
		for n := int64(0); n < perTick && atomic.LoadInt64(&c.players) < atomic.LoadInt64(&c.launchWant) && c.ctx.Err() == nil; n++ {
			index := atomic.AddInt64(&c.players, 1) - 1
			c.people.Add(1)
			go c.person(index)
		}
	}
}

func percentiles(values []float64) map[string]float64 {
	sorted := append([]float64(nil), values...)
	sort.Float64s(sorted)
	at := func(q float64) float64 {
		if len(sorted) == 0 {
			return 0
		}
		i := int(math.Ceil(q*float64(len(sorted)))) - 1
		if i < 0 {
			i = 0
		}
		return math.Round(sorted[i]*1e6) / 1e3
	}
	return map[string]float64{"p50": at(0.5), "p90": at(0.9), "p99": at(0.99), "max": at(1), "samples": float64(len(sorted))}
}

func milliseconds(seconds []float64) []float64 {
	out := make([]float64, len(seconds))
	for i, s := range seconds {
		out[i] = math.Round(s*1e5) / 100
	}
	return out
}

// capacityReport: the window since "mark".
type capacityReport struct {
	Seconds     float64            `json:"seconds"`
	Players     int64              `json:"players"`
	Connected   int64              `json:"connected"`
	InGame      int64              `json:"in_game"`
	Watching    int64              `json:"watching"`
	LiveGames   int64              `json:"live_games"`
	Moves       int                `json:"moves"`
	MovesPerS   float64            `json:"moves_per_s"`
	LatencyMS   map[string]float64 `json:"latency_ms"`
	MatchWaitMS map[string]float64 `json:"matchmaking_wait_ms"`
	// Every sample (ms), so that a parent running several of these processes takes percentiles of them all.
	LatencySamples []float64          `json:"latency_samples_ms"`
	WaitSamples    []float64          `json:"matchmaking_samples_ms"`
	Errors         map[string]int     `json:"errors"`
	GamesFinished  int                `json:"games_finished"`
	GamesTimedOut  int                `json:"games_timed_out"`
	GamesWatched   int                `json:"games_watched"`
	ThinkS         map[string]float64 `json:"think_s"` // the think times drawn (mean, max, count)
	ClientCPUS     float64            `json:"client_cpu_s"`

	// Players and latencies by transport (connect.go).
	Transports map[string]transportReport `json:"transports"`

	// Streams lost and how the players came back (human.go's failover; tools/bench_herd.py).
	StreamsLost    map[string]int     `json:"streams_lost"` // by status; RECONNECT: a gateway's graceful stop
	LostNow        int64              `json:"lost_now"`     // players not back yet
	Failovers      int                `json:"failovers"`
	BackMS         map[string]float64 `json:"back_ms"`
	BackSamples    []float64          `json:"back_samples_ms"`
	ResumeMS       map[string]float64 `json:"resume_ms"`
	ResumeSamples  []float64          `json:"resume_samples_ms"`
	MovesResent    int                `json:"moves_resent"`
	SearchesResent int                `json:"searches_resent"`
}

func (c *capacity) report(now time.Time) capacityReport {
	t := c.tally
	t.mu.Lock()
	defer t.mu.Unlock()
	seconds := now.Sub(t.marked).Seconds()
	errs := make(map[string]int, len(t.errors)) // marshalled after the lock is let go
	for k, v := range t.errors {
		errs[k] = v
	}
	lost := make(map[string]int, len(t.streamsLost))
	for k, v := range t.streamsLost {
		lost[k] = v
	}
	return capacityReport{
		Seconds: math.Round(seconds*1000) / 1000, Players: atomic.LoadInt64(&c.players),
		Connected: atomic.LoadInt64(&c.connected), InGame: atomic.LoadInt64(&c.inGame),
		Watching: atomic.LoadInt64(&c.watching), LiveGames: atomic.LoadInt64(&c.liveGames),
		Moves: t.moves, MovesPerS: math.Round(float64(t.moves)/math.Max(seconds, 1e-9)*10) / 10,
		LatencyMS: percentiles(t.latencies), MatchWaitMS: percentiles(t.waits), Errors: errs,
		LatencySamples: milliseconds(t.latencies), WaitSamples: milliseconds(t.waits),
		GamesFinished: t.finished, GamesTimedOut: t.timedOut, GamesWatched: t.watched,
		ThinkS: map[string]float64{"mean": math.Round(t.thinkSum/math.Max(1, float64(t.thinks))*1000) / 1000,
			"max": math.Round(t.thinkMax*1000) / 1000, "count": float64(t.thinks)},
		ClientCPUS: (processCPU() - t.cpuAtMark).Seconds(),
		Transports: transportReports(c.transport, atomic.LoadInt64(&c.players), t.latencyBy),

		StreamsLost: lost, LostNow: atomic.LoadInt64(&c.lostNow), Failovers: t.failovers,
		BackMS: percentiles(t.back), BackSamples: milliseconds(t.back),
		ResumeMS: percentiles(t.resumes), ResumeSamples: milliseconds(t.resumes),
		MovesResent: t.movesResent, SearchesResent: t.searchesResent,
	}
}

func (c *capacity) mark() {
	t := c.tally
	t.mu.Lock()
	t.marked, t.cpuAtMark = time.Now(), processCPU()
	t.moves, t.finished, t.timedOut, t.watched = 0, 0, 0, 0
	t.thinkSum, t.thinkMax, t.thinks = 0, 0, 0
	t.latencies, t.waits, t.errors, t.latencyBy = nil, nil, map[string]int{}, map[string][]float64{}
	t.streamsLost, t.failovers, t.back, t.resumes = map[string]int{}, 0, nil, nil
	t.movesResent, t.searchesResent = 0, 0
	t.mu.Unlock()
}

func (c *capacity) ticker() {
	started := time.Now()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case now := <-tick.C:
			c.tally.mu.Lock()
			moves, errs := c.tally.ticks, c.tally.errorsTotal
			c.tally.ticks = 0
			c.tally.mu.Unlock()
			line, _ := json.Marshal(map[string]any{
				"t": math.Round(now.Sub(started).Seconds()*10) / 10, "players": atomic.LoadInt64(&c.players),
				"connected": atomic.LoadInt64(&c.connected), "in_game": atomic.LoadInt64(&c.inGame),
				"watching": atomic.LoadInt64(&c.watching), "live_games": atomic.LoadInt64(&c.liveGames),
				"moves": moves, "errors": errs, "lost": atomic.LoadInt64(&c.lostNow),
			})
			c.out.line("tick " + string(line))
		}
	}
}

// runCapacity: the scenario's control loop on stdin (the lines at the top of this file).
func runCapacity(gateways []string, players int, cfg capacityConfig) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := &capacity{
		cfg: cfg, transport: newTransport(gateways, cfg.sources), ctx: ctx,
		tally: &tally{errors: map[string]int{}}, out: &out{w: bufio.NewWriter(os.Stdout)},
		submitted: map[moveKey]time.Time{}, launchWant: int64(players),
	}
	c.mark()
	go c.launcher()
	go c.ticker()
	scanner := bufio.NewScanner(os.Stdin)
	for scanner.Scan() {
		fields := strings.Fields(scanner.Text())
		if len(fields) == 0 {
			continue
		}
		switch fields[0] {
		case "add":
			n, err := strconv.ParseInt(fields[len(fields)-1], 10, 64)
			if len(fields) != 2 || err != nil || n < 0 {
				return errors.New("add N: a count")
			}
			atomic.AddInt64(&c.launchWant, n)
		case "mark":
			c.mark()
		case "report":
			line, err := json.Marshal(c.report(time.Now()))
			if err != nil {
				return err
			}
			c.out.line("report " + string(line))
		case "ledger":
			if len(fields) == 2 && fields[1] == "on" {
				// Before any player: they read c.ledger unguarded (launchWant's atomics order it).
				if atomic.LoadInt64(&c.launchWant) > 0 || c.ledger != nil {
					return errors.New("ledger on: before any player is added, once")
				}
				c.ledger = &ledger{games: map[string]map[uint32]*seatMoves{}}
				continue
			}
			if len(fields) != 1 || c.ledger == nil {
				return errors.New(`ledger: "ledger on" first, then "ledger"`)
			}
			// The players stop first, so that every move is either answered or known unanswered.
			cancel()
			stopped := make(chan struct{})
			go func() { c.people.Wait(); close(stopped) }()
			select {
			case <-stopped:
			case <-time.After(30 * time.Second):
				return errors.New("ledger: the players did not stop within 30 s")
			}
			c.ledger.mu.Lock()
			line, err := json.Marshal(map[string]any{"games": c.ledger.games})
			c.ledger.mu.Unlock()
			if err != nil {
				return err
			}
			c.out.line("ledger " + string(line))
		case "stop":
			cancel()
			c.out.line("stopped")
			return nil
		default:
			return fmt.Errorf("unknown line %q", scanner.Text())
		}
	}
	cancel()
	c.out.line("stopped")
	return nil
}
