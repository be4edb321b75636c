// The capacity scenario's run (human.go has its players): the players launched, what they
// measured (tally), the moves they sent (ledger, for tools/bench_herd.py), the reports, and the
// control lines on stdin.
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
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	playv1 "tafel.dev/gen/tafel/play/v1"
)

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

func (c *capacity) count(f func(*tally)) {
	c.tally.mu.Lock()
	f(c.tally)
	c.tally.mu.Unlock()
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
		launchWant: int64(players),
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
