// tafel-loadgen-go: the load generator's Connect Four players in Go, for benchmarks whose servers
// share the machine's cores with their client (docs/benchmarks.md, "Players in Go, so the servers keep the cores").
//
// It is started by the Python load generator (`tafel_loadgen games --client go`), which owns the
// measured window, the servers' CPU and the summary; this program only plays. Each player does what
// tafel_loadgen/games.py's players do over the public protos alone: a TCP connection of its own, a
// guest sign-in, one Play stream kept across its games (batched responses), searches that start
// their game's watch (FindMatchRequest.watch), random legal columns from the board it tracks from
// the events it sees, latency from its submit until the opponent's stream delivers the disc.
//
// Lines between it and its parent:
//
//	stdout "matched"        a player has its first match (the parent counts them on the window's board)
//	stdin  "open"           the window opens now (every player of every client process matched)
//	stdout "result {json}"  at the end: tafel_loadgen.stats.Stats.as_dict's fields
//
// `--capacity` runs the capacity scenario instead (human.go, which lists its own lines).
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Grace after the window's end for a player waiting on an opponent who stopped with the run.
const grace = 2 * time.Second

type window struct {
	mu       sync.Mutex
	opened   chan struct{}
	start    time.Time
	end      time.Time
	cpuStart time.Duration
	duration time.Duration
}

func (w *window) open() {
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case <-w.opened:
		return
	default:
	}
	w.start = time.Now()
	w.end = w.start.Add(w.duration)
	w.cpuStart = processCPU()
	close(w.opened)
}

func (w *window) isOpen() bool {
	select {
	case <-w.opened:
		return true
	default:
		return false
	}
}

// inside: the window is open and not yet over (what counts).
func (w *window) inside(now time.Time) bool {
	return w.isOpen() && now.Before(w.end)
}

// over: the window has opened and ended (players stop moving and searching).
func (w *window) over(now time.Time) bool {
	return w.isOpen() && !now.Before(w.end)
}

func processCPU() time.Duration {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		return 0
	}
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
}

// result: what tafel_loadgen.stats.Stats.merge reads.
type result struct {
	Moves            int            `json:"moves"`
	MovesWholeRun    int            `json:"moves_whole_run"`
	GamesFinished    int            `json:"games_finished"`
	Latencies        []float64      `json:"latencies"`
	Matchmaking      []float64      `json:"matchmaking"`
	FirstMatchmaking []float64      `json:"first_matchmaking"`
	SetupS           float64        `json:"setup_s"`
	Errors           map[string]int `json:"errors"`
	ClientCPUS       float64        `json:"client_cpu_s"`
}

func (r *result) add(o *result) {
	r.Moves += o.Moves
	r.MovesWholeRun += o.MovesWholeRun
	r.GamesFinished += o.GamesFinished
	r.Latencies = append(r.Latencies, o.Latencies...)
	r.Matchmaking = append(r.Matchmaking, o.Matchmaking...)
	r.FirstMatchmaking = append(r.FirstMatchmaking, o.FirstMatchmaking...)
	for k, v := range o.Errors {
		r.Errors[k] += v
	}
}

// out serialises the lines to the parent.
type out struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func (o *out) line(s string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.w.WriteString(s)
	o.w.WriteByte('\n')
	o.w.Flush()
}

func main() {
	targets := flag.String("gateways", "127.0.0.1:50051", "comma-separated gateway addresses")
	players := flag.Int("players", 2, "players (two a game)")
	think := flag.Duration("think", 0, "how long a player waits before each move")
	duration := flag.Duration("duration", 10*time.Second, "the measured window")
	seed := flag.Int64("seed", 1, "seeds player i's columns with seed*100000+i")
	// The capacity scenario (human.go): players at a person's pace, added on stdin while it runs.
	capacityMode := flag.Bool("capacity", false, "the capacity scenario at human pace (human.go; its lines are there)")
	thinkMean := flag.Duration("think-mean", 10*time.Second, "capacity: mean think time before a move; "+
		"log-normal (median below the mean, a long tail), capped at --think-cap, its median solved so the capped draws have this mean")
	thinkSigma := flag.Float64("think-sigma", 0.75, "capacity: the think time's log-normal sigma "+
		"(0.75: median 7.65 s at a 10 s mean, 1 move in 10 over 20 s, under 1 in 100 at the 45 s cap)")
	thinkCap := flag.Duration("think-cap", 0, "capacity: the longest think; 0 = 3/4 of --per-move, "+
		"so a person's move never runs out the clock by the model (a quarter left for the network and the clock sweep)")
	perMove := flag.Duration("per-move", 60*time.Second, "capacity: the per-move clock of every search "+
		"(TimeControl.per_move; 60 s, the platform's default, is what a person at 10 s a move picks)")
	pause := flag.Duration("pause", 5*time.Second, "capacity: mean pause before each search and between a spectator's games (uniform, half to 1.5 times it)")
	spectators := flag.Float64("spectators", 0.1, "capacity: share of the players spectating live games instead of playing")
	connectRate := flag.Int("connect-rate", 500, "capacity: players started a second after an \"add N\"")
	sources := flag.Int("sources", 8, "capacity: loopback source addresses the players connect from (127.0.0.1 to .N), "+
		"as one reaches a gateway port through at most the ephemeral port range (~28,000 connections)")
	web := flag.String("web", "", "capacity: comma-separated web edge base URLs (http://host:port) for the players arriving as browsers (connect.go)")
	webShare := flag.Float64("web-share", 0, "capacity: share of the players on the web edge (--web), chosen by player index")
	flag.Parse()
	if *capacityMode {
		cap := *thinkCap
		if cap == 0 {
			cap = *perMove * 3 / 4
		}
		thinking, err := newThinker(thinkMean.Seconds(), *thinkSigma, cap.Seconds())
		if err != nil || *players < 0 || *spectators < 0 || *spectators > 1 || *connectRate < 1 || *perMove < time.Second || *sources < 1 || *sources > 254 {
			fmt.Fprintln(os.Stderr, "tafel-loadgen-go --capacity: --players >= 0, --spectators 0..1, --connect-rate >= 1, --per-move >= 1s;", err)
			os.Exit(2)
		}
		if *webShare < 0 || *webShare > 1 || (*webShare > 0 && *web == "") {
			fmt.Fprintln(os.Stderr, "tafel-loadgen-go --capacity: --web-share 0..1, and above 0 only with --web URLS")
			os.Exit(2)
		}
		if *web != "" {
			webEdge.urls, webEdge.share = strings.Split(*web, ","), *webShare
		}
		fmt.Fprintf(os.Stderr, "tafel-loadgen-go --capacity: think mean %s, median %.2fs, sigma %g, cap %s; per-move clock %s\n",
			*thinkMean, thinking.median(), *thinkSigma, cap, *perMove)
		cfg := capacityConfig{think: thinking, pause: *pause, perMove: *perMove, spectators: *spectators, connectRate: *connectRate, sources: *sources, seed: *seed}
		if err := runCapacity(strings.Split(*targets, ","), *players, cfg); err != nil {
			fmt.Fprintln(os.Stderr, "tafel-loadgen-go:", err)
			os.Exit(1)
		}
		return
	}
	if *players < 1 || *duration <= 0 || *think < 0 {
		fmt.Fprintln(os.Stderr, "tafel-loadgen-go: --players >= 1, --duration > 0 and --think >= 0")
		os.Exit(2)
	}

	launched := time.Now()
	run := &run{
		gateways: strings.Split(*targets, ","),
		think:    *think,
		seed:     *seed,
		window:   &window{opened: make(chan struct{}), duration: *duration},
		out:      &out{w: bufio.NewWriter(os.Stdout)},
	}
	// The parent says when the window opens; a parent gone before that ends the run.
	go func() {
		scanner := bufio.NewScanner(os.Stdin)
		for scanner.Scan() {
			if scanner.Text() == "open" {
				run.window.open()
			}
		}
		if !run.window.isOpen() {
			fmt.Fprintln(os.Stderr, "tafel-loadgen-go: stdin closed before the window opened")
			os.Exit(3)
		}
	}()

	results := make([]*result, *players)
	var wg sync.WaitGroup
	for i := 0; i < *players; i++ {
		results[i] = &result{Errors: map[string]int{}}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			run.player(i, results[i])
		}(i)
	}
	// The window's CPU is this process's own (every thread: gRPC's too), noted at its end.
	<-run.window.opened
	time.Sleep(time.Until(run.window.end))
	cpu := processCPU() - run.window.cpuStart
	wg.Wait()

	total := &result{Errors: map[string]int{}, Latencies: []float64{}, Matchmaking: []float64{}, FirstMatchmaking: []float64{}}
	for _, r := range results {
		total.add(r)
	}
	total.SetupS = run.window.start.Sub(launched).Seconds()
	total.ClientCPUS = cpu.Seconds()
	encoded, err := json.Marshal(total)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tafel-loadgen-go:", err)
		os.Exit(1)
	}
	run.out.line("result " + string(encoded))
}
