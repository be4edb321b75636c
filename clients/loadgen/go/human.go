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
// Lines between it and its parent:
//
//	stdin  "add N"           N more players (started at --connect-rate a second)
//	stdin  "mark"            a measured window starts now (its counters are reset)
//	stdin  "report"          stdout "report {json}": the window since "mark" (capacityReport)
//	stdin  "stop" or EOF     every player stops; stdout "stopped", and the program exits
//	stdout "tick {json}"     each second: players, connected, in games, watching, live games, moves that second
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// person: one player for the whole run; a failed sign-in or stream is counted and tried again.
func (c *capacity) person(index int64) {
	rng := rand.New(rand.NewSource(c.cfg.seed*1_000_000 + index))
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
	for c.ctx.Err() == nil {
		stream, err := sess.play(c.ctx)
		if err == nil {
			conn := &playConn{stream: stream}
			err = conn.send(&playv1.PlayRequest{Action: &playv1.PlayRequest_SetOptions{SetOptions: &playv1.PlayOptions{BatchResponses: true}}})
			if err == nil {
				atomic.AddInt64(&c.connected, 1)
				if c.spectator(index) {
					err = c.spectate(sess, conn, rng)
				} else {
					err = c.play(conn, index, rng)
				}
				atomic.AddInt64(&c.connected, -1)
			}
		}
		if c.ctx.Err() != nil {
			return
		}
		if err != nil {
			c.fail(err)
		}
		if !c.sleep(time.Second) {
			return
		}
	}
}

// playConn: one Play stream with its batches unpacked and its correlation ids.
type playConn struct {
	stream      playStream
	pending     []*playv1.PlayResponse
	correlation uint64
	requests    uint64
}

func (p *playConn) next() (*playv1.PlayResponse, error) {
	for len(p.pending) == 0 {
		response, err := p.stream.Recv()
		if err != nil {
			return nil, err
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
	return response, nil
}

func (p *playConn) send(request *playv1.PlayRequest) error {
	p.correlation++
	request.CorrelationId = p.correlation
	return p.stream.Send(request)
}

// pauseBetweenGames: a person's moment between games (and before the first search).
func (c *capacity) pauseBetweenGames(rng *rand.Rand) bool {
	return c.sleep(time.Duration((0.5 + rng.Float64()) * float64(c.cfg.pause)))
}

// play: searches and games one after another on one stream, until the run stops or the stream fails.
func (c *capacity) play(conn *playConn, index int64, rng *rand.Rand) error {
	for {
		if !c.pauseBetweenGames(rng) {
			return nil
		}
		queued := time.Now()
		matched, watching, err := c.findAndWatch(conn, index)
		if err != nil {
			return err
		}
		if matched == nil {
			continue // refused: counted; searched again after the pause
		}
		waited := time.Since(queued).Seconds()
		c.tally.mu.Lock()
		c.tally.waits = append(c.tally.waits, waited)
		c.tally.mu.Unlock()
		atomic.AddInt64(&c.inGame, 1)
		if matched.GetSeat() == 0 {
			atomic.AddInt64(&c.liveGames, 1)
		}
		err = c.playGame(conn, index, rng, matched, watching)
		atomic.AddInt64(&c.inGame, -1)
		if matched.GetSeat() == 0 {
			atomic.AddInt64(&c.liveGames, -1)
		}
		if err != nil {
			return err
		}
		// The game's watch ends with the game; the stream stays open for the next search.
	}
}

func (c *capacity) findAndWatch(conn *playConn, index int64) (*playv1.MatchFound, *playv1.GetGameResponse, error) {
	conn.requests++
	search := &playv1.FindMatchRequest{
		Game: "connect4", MinSeats: 2, MaxSeats: 2, Watch: true,
		RequestId:   fmt.Sprintf("cap%d-%d-%x", c.cfg.seed, index, conn.requests),
		TimeControl: &playv1.TimeControl{PerMove: durationpb.New(c.cfg.perMove)},
	}
	if err := conn.send(&playv1.PlayRequest{Action: &playv1.PlayRequest_FindMatch{FindMatch: search}}); err != nil {
		return nil, nil, err
	}
	correlation := conn.correlation
	var matched *playv1.MatchFound
	for {
		response, err := conn.next()
		if err != nil {
			return nil, nil, err
		}
		if response.GetCorrelationId() != correlation {
			continue // a finished game's leftovers
		}
		switch kind := response.GetKind().(type) {
		case *playv1.PlayResponse_Refusal:
			if matched != nil { // the watch's refusal: the match stands, watch it ourselves
				view, err := watchGame(conn, matched.GetGameId())
				return matched, view, err
			}
			c.tally.fail(codeName(codes.Code(kind.Refusal.GetCode())))
			return nil, nil, nil
		case *playv1.PlayResponse_MatchUpdate:
			if found := kind.MatchUpdate.GetMatched(); found != nil && matched == nil {
				matched = found
				if !found.GetWatchStarted() {
					view, err := watchGame(conn, found.GetGameId())
					return found, view, err
				}
			}
		case *playv1.PlayResponse_Watching:
			return matched, kind.Watching, nil
		}
	}
}

// watchGame: a watch on the stream and its answer (a refusal is returned as its status).
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
		if refusal := response.GetRefusal(); refusal != nil {
			return nil, status.Error(codes.Code(refusal.GetCode()), refusal.GetReason())
		}
		if watching := response.GetWatching(); watching != nil {
			return watching, nil
		}
	}
}

func (c *capacity) playGame(conn *playConn, index int64, rng *rand.Rand, matched *playv1.MatchFound, watching *playv1.GetGameResponse) error {
	view := watching.GetView().GetConnect4()
	g := &game{id: matched.GetGameId(), seat: matched.GetSeat(), rows: view.GetRows(), status: watching.GetSummary().GetStatus()}
	for col, column := range view.GetBoard() {
		g.heights = append(g.heights, uint32(len(column.GetSeats())))
		if uint32(len(column.GetSeats())) < g.rows {
			g.open = append(g.open, uint32(col))
		}
	}
	for !g.status.GetOver() {
		if !toAct(g.status, g.seat) {
			response, err := conn.next()
			if err != nil {
				return err
			}
			c.handle(g, response)
			continue
		}
		think := c.cfg.think.draw(rng)
		c.tally.mu.Lock()
		c.tally.thinkSum += think.Seconds()
		c.tally.thinks++
		c.tally.thinkMax = math.Max(c.tally.thinkMax, think.Seconds())
		c.tally.mu.Unlock()
		if !c.sleep(think) {
			return nil
		}
		if len(g.open) == 0 {
			c.tally.fail("NO_LEGAL_COLUMN")
			return nil
		}
		column := g.open[rng.Intn(len(g.open))]
		c.markSubmitted(moveKey{g.id, g.status.GetVersion() + 1}, time.Now())
		conn.requests++
		move := &gamesv1.GameMove{Game: &gamesv1.GameMove_Connect4{Connect4: &connect4v1.Move{Column: column}}}
		submit := &playv1.SubmitMoveRequest{
			GameId: g.id, ExpectedVersion: g.status.GetVersion(), Move: move,
			RequestId: fmt.Sprintf("cap%d-%d-%x", c.cfg.seed, index, conn.requests),
		}
		if err := conn.send(&playv1.PlayRequest{Action: &playv1.PlayRequest_SubmitMove{SubmitMove: submit}}); err != nil {
			return err
		}
		accepted, err := c.answer(conn, g, conn.correlation)
		if err != nil {
			return err
		}
		if accepted == nil {
			return nil // refused (counted): the game is left, as a person whose move failed would reload
		}
		c.tally.mu.Lock()
		c.tally.moves++
		c.tally.ticks++
		c.tally.mu.Unlock()
		g.drop(column)
		if accepted.GetStatus().GetVersion() >= g.status.GetVersion() {
			g.status = accepted.GetStatus()
		}
	}
	if g.seat == 0 {
		c.tally.mu.Lock()
		c.tally.finished++
		if g.status.GetOutcome().GetReason() == "TIMEOUT" {
			c.tally.timedOut++
			c.tally.errors["GAME_TIMED_OUT"]++
			c.tally.errorsTotal++
		}
		c.tally.mu.Unlock()
	}
	return nil
}

func (c *capacity) answer(conn *playConn, g *game, correlation uint64) (*playv1.SubmitMoveResponse, error) {
	for {
		response, err := conn.next()
		if err != nil {
			return nil, err
		}
		if response.GetCorrelationId() != correlation {
			c.handle(g, response)
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

// handle: the opponent's disc (its latency: submit until this stream has it) or the game's status.
func (c *capacity) handle(g *game, response *playv1.PlayResponse) {
	delivery := response.GetEvent()
	if delivery == nil || delivery.GetGameId() != g.id {
		return
	}
	event := delivery.GetEvent()
	if dropped := event.GetConnect4().GetDiscDropped(); dropped != nil && dropped.GetSeat() != g.seat {
		g.drop(dropped.GetColumn())
		if started, ok := c.takeSubmitted(moveKey{g.id, event.GetVersion()}); ok {
			latency := time.Since(started).Seconds()
			c.tally.mu.Lock()
			c.tally.latencies = append(c.tally.latencies, latency)
			c.tally.mu.Unlock()
		}
	}
	if next := delivery.GetStatus(); next != nil && next.GetVersion() >= g.status.GetVersion() {
		g.status = next
	}
}

// spectate: the newest live games, one watched until it ends, then another, on one stream.
func (c *capacity) spectate(sess session, conn *playConn, rng *rand.Rand) error {
	for {
		if !c.pauseBetweenGames(rng) {
			return nil
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
			if status.Code(err) == codes.NotFound {
				continue // gone between the list and the watch
			}
			if c.ctx.Err() != nil {
				return nil
			}
			c.fail(err)
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
		for n := int64(0); n < perTick && atomic.LoadInt64(&c.players) < atomic.LoadInt64(&c.launchWant); n++ {
			index := atomic.AddInt64(&c.players, 1) - 1
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
	}
}

func (c *capacity) mark() {
	t := c.tally
	t.mu.Lock()
	t.marked, t.cpuAtMark = time.Now(), processCPU()
	t.moves, t.finished, t.timedOut, t.watched = 0, 0, 0, 0
	t.thinkSum, t.thinkMax, t.thinks = 0, 0, 0
	t.latencies, t.waits, t.errors = nil, nil, map[string]int{}
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
				"moves": moves, "errors": errs,
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
		cfg: cfg, transport: grpcTransport{gateways: gateways, sources: cfg.sources}, ctx: ctx,
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
