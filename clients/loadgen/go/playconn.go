// One player's Play stream (playConn: batches unpacked, correlation ids, why it ended) and what
// a player carries from one stream to the next when its gateway goes away (human, failover).
package main

import (
	"context"
	"io"
	"math/rand"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	playv1 "tafel.dev/gen/tafel/play/v1"
)

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
