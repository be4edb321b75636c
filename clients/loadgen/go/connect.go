package main

// connectTransport: capacity players who arrive as a browser tab does, over the web edge
// (gateway/web: the Connect protocol on HTTP/1.1) instead of gRPC. The edge has no Play stream, so
// connectPlay plays one's part for human.go, doing what the web app does (clients/web/src):
// FindMatch as a server stream, GetGame then WatchGame (a server stream) for the game page,
// SubmitMove and ListLiveGames as unary calls. Their answers come back as the PlayResponses the
// Play stream would send, under the same correlation ids, so human.go's players run unchanged.
//
// The client is written here rather than taken from connectrpc.com/connect: the build is offline,
// in GOPATH mode over Debian's Go packages (build.sh), which have no Connect library, and what a
// player needs of the protocol is small: binary bodies (application/proto unary,
// application/connect+proto streams with the 5-byte envelope, the end-of-stream message carrying
// the error), the bearer token, and Connect's error JSON with its google.rpc.ErrorInfo.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	playv1 "tafel.dev/gen/tafel/play/v1"
)

const (
	// A browser opens at most 6 connections to a host over HTTP/1.1; a player needs 3 at most (a
	// server stream, a unary call, and a GetGame while a game page opens).
	browserConnsPerHost = 6
	// Below the edge's 30 s header read timeout (granian's HTTP/1 default), so that a kept-alive
	// connection is not reused just as the server closes it.
	idleConnTimeout = 25 * time.Second
	maxMessageBytes = 4 << 20
	connectService  = "/tafel.play.v1."
)

// connectTransport: an http.Client of its own per player (its own sockets, as a tab has), to
// urls[index % len], from the loopback source addresses grpcTransport uses.
type connectTransport struct {
	urls    []string
	sources int
}

func (t connectTransport) client(index int) (*http.Client, string) {
	base := strings.TrimRight(t.urls[index%len(t.urls)], "/")
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if parsed, err := url.Parse(base); err == nil && t.sources > 1 && strings.HasPrefix(parsed.Hostname(), "127.") {
		dialer.LocalAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(1+(index/len(t.urls))%t.sources))}
	}
	transport := &http.Transport{
		DialContext:         dialer.DialContext,
		MaxConnsPerHost:     browserConnsPerHost,
		MaxIdleConnsPerHost: browserConnsPerHost,
		MaxIdleConns:        browserConnsPerHost,
		IdleConnTimeout:     idleConnTimeout,
		DisableCompression:  true, // the edge answers identity only
	}
	return &http.Client{Transport: transport}, base
}

type connectSession struct {
	client *http.Client
	base   string
	token  string
	done   context.Context // ended by close: every stream of the session stops
	stop   context.CancelFunc
}

func (t connectTransport) signIn(ctx context.Context, index int) (session, error) {
	client, base := t.client(index)
	done, stop := context.WithCancel(context.Background())
	s := &connectSession{client: client, base: base, done: done, stop: stop}
	var answer playv1.SignInAsGuestResponse
	if err := s.unary(ctx, "AccountService/SignInAsGuest", &playv1.SignInAsGuestRequest{}, &answer); err != nil {
		s.close()
		return nil, err
	}
	s.token = answer.GetSession().GetToken()
	return s, nil
}

func (s *connectSession) close() {
	s.stop()
	s.client.CloseIdleConnections()
}

func (s *connectSession) liveGames(ctx context.Context, game string, pageSize int32) ([]*playv1.GameSummary, error) {
	var answer playv1.ListLiveGamesResponse
	if err := s.unary(ctx, "GameService/ListLiveGames", &playv1.ListLiveGamesRequest{Game: game, PageSize: pageSize}, &answer); err != nil {
		return nil, err
	}
	return answer.GetGames(), nil
}

func (s *connectSession) post(ctx context.Context, method, contentType string, body []byte) (*http.Response, error) {
	request, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+connectService+method, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	request.Header.Set("Content-Type", contentType)
	request.Header.Set("Connect-Protocol-Version", "1")
	if s.token != "" {
		request.Header.Set("Authorization", "Bearer "+s.token)
	}
	response, err := s.client.Do(request)
	if err != nil {
		return nil, transportError(ctx, err)
	}
	return response, nil
}

// unary: a Connect unary call with binary bodies.
func (s *connectSession) unary(ctx context.Context, method string, request, answer proto.Message) error {
	body, err := proto.Marshal(request)
	if err != nil {
		return err
	}
	response, err := s.post(ctx, method, "application/proto", body)
	if err != nil {
		return err
	}
	defer response.Body.Close()
	data, err := io.ReadAll(io.LimitReader(response.Body, maxMessageBytes))
	if err != nil {
		return transportError(ctx, err)
	}
	if response.StatusCode != http.StatusOK {
		return httpError(response.StatusCode, data)
	}
	if err := proto.Unmarshal(data, answer); err != nil {
		return &edgeError{code: codes.Internal, message: "undecodable answer: " + err.Error()}
	}
	return nil
}

// stream: a Connect server stream; each message goes to each as it comes, and the error its
// end-of-stream message carries (nil for none) is returned.
func (s *connectSession) stream(ctx context.Context, method string, request proto.Message, newMessage func() proto.Message, each func(proto.Message)) error {
	payload, err := proto.Marshal(request)
	if err != nil {
		return err
	}
	body := make([]byte, 5+len(payload))
	binary.BigEndian.PutUint32(body[1:5], uint32(len(payload)))
	copy(body[5:], payload)
	response, err := s.post(ctx, method, "application/connect+proto", body)
	if err != nil {
		return err
	}
	defer response.Body.Close()
	if response.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(io.LimitReader(response.Body, maxMessageBytes))
		return httpError(response.StatusCode, data)
	}
	reader := bufio.NewReader(response.Body)
	var prefix [5]byte
	for {
		if _, err := io.ReadFull(reader, prefix[:]); err != nil {
			if err == io.EOF {
				return &edgeError{code: codes.Internal, message: "the stream ended without its end-of-stream message"}
			}
			return transportError(ctx, err)
		}
		flags, size := prefix[0], binary.BigEndian.Uint32(prefix[1:])
		if size > maxMessageBytes {
			return &edgeError{code: codes.ResourceExhausted, message: fmt.Sprintf("a %d-byte message", size)}
		}
		data := make([]byte, size)
		if _, err := io.ReadFull(reader, data); err != nil {
			return transportError(ctx, err)
		}
		switch {
		case flags&2 != 0:
			return endOfStream(data)
		case flags&1 != 0:
			return &edgeError{code: codes.Internal, message: "a compressed message, which was not asked for"}
		}
		message := newMessage()
		if err := proto.Unmarshal(data, message); err != nil {
			return &edgeError{code: codes.Internal, message: "undecodable message: " + err.Error()}
		}
		each(message)
	}
}

// edgeError: an error as the edge answered it (or a call that got no answer: UNAVAILABLE, as
// gRPC names a lost connection), read by status.Code like a gRPC status; refusal() is what the
// Play stream would have sent for it.
type edgeError struct {
	code     codes.Code
	reason   string // google.rpc.ErrorInfo's
	message  string
	version  uint64 // ErrorInfo's current_version, when it has one
	answered bool   // the edge answered it (a refusal), rather than the call failing on the way
}

func (e *edgeError) Error() string {
	return fmt.Sprintf("web edge: %s %s: %s", codeName(e.code), e.reason, e.message)
}

func (e *edgeError) GRPCStatus() *status.Status { return status.New(e.code, e.message) }

func (e *edgeError) refusal() *playv1.Refusal {
	reason := e.reason
	if reason == "" {
		reason = codeName(e.code) // as the gateway names a refusal without a reason of its own
	}
	return &playv1.Refusal{Code: int32(e.code), Reason: reason, Message: e.message, CurrentVersion: e.version}
}

func transportError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return &edgeError{code: codes.Canceled, message: ctx.Err().Error()}
	}
	return &edgeError{code: codes.Unavailable, message: err.Error()}
}

// connectCodes: Connect's code names (Connect spells "canceled" with one l).
var connectCodes = func() map[string]codes.Code {
	names := map[string]codes.Code{"canceled": codes.Canceled}
	for code, name := range codeNames {
		names[strings.ToLower(name)] = codes.Code(code)
	}
	return names
}()

type connectErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Details []struct {
		Type  string `json:"type"`
		Value string `json:"value"`
	} `json:"details"`
}

func (b *connectErrorBody) edgeError() *edgeError {
	code, ok := connectCodes[b.Code]
	if !ok {
		code = codes.Unknown
	}
	e := &edgeError{code: code, message: b.Message, answered: true}
	for _, detail := range b.Details {
		if detail.Type != "google.rpc.ErrorInfo" {
			continue
		}
		// Connect sends the bytes in base64 without padding; accept it either way.
		raw, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(detail.Value, "="))
		if err == nil {
			e.reason, e.version = errorInfo(raw)
		}
	}
	return e
}

// httpError: a call answered with an HTTP error: Connect's error JSON, or the status alone.
func httpError(httpStatus int, data []byte) error {
	var body connectErrorBody
	if json.Unmarshal(data, &body) == nil && body.Code != "" {
		return body.edgeError()
	}
	code := codes.Unknown
	switch httpStatus {
	case 400:
		code = codes.Internal
	case 401:
		code = codes.Unauthenticated
	case 403:
		code = codes.PermissionDenied
	case 404:
		code = codes.Unimplemented
	case 429, 502, 503, 504:
		code = codes.Unavailable
	}
	return &edgeError{code: code, message: fmt.Sprintf("HTTP %d", httpStatus), answered: true}
}

// endOfStream: the error a stream's last message carries, if any.
func endOfStream(data []byte) error {
	var end struct {
		Error *connectErrorBody `json:"error"`
	}
	if err := json.Unmarshal(data, &end); err != nil {
		return &edgeError{code: codes.Internal, message: "undecodable end of stream: " + err.Error()}
	}
	if end.Error == nil {
		return nil
	}
	return end.Error.edgeError()
}

// errorInfo: google.rpc.ErrorInfo's reason and its current_version metadata, read off the wire
// (the genproto package here is for the older protobuf API the generated messages do not use).
func errorInfo(raw []byte) (reason string, version uint64) {
	for len(raw) > 0 {
		number, kind, n := protowire.ConsumeTag(raw)
		if n < 0 {
			return
		}
		raw = raw[n:]
		if kind != protowire.BytesType {
			if n = protowire.ConsumeFieldValue(number, kind, raw); n < 0 {
				return
			}
			raw = raw[n:]
			continue
		}
		value, n := protowire.ConsumeBytes(raw)
		if n < 0 {
			return
		}
		raw = raw[n:]
		switch number {
		case 1: // reason
			reason = string(value)
		case 3: // metadata: map<string, string> entries
			var key, text string
			for len(value) > 0 {
				field, fieldKind, m := protowire.ConsumeTag(value)
				if m < 0 || fieldKind != protowire.BytesType {
					break
				}
				s, m2 := protowire.ConsumeBytes(value[m:])
				if m2 < 0 {
					break
				}
				value = value[m+m2:]
				if field == 1 {
					key = string(s)
				} else if field == 2 {
					text = string(s)
				}
			}
			if key == "current_version" {
				fmt.Sscan(text, &version)
			}
		}
	}
	return
}

func (s *connectSession) play(ctx context.Context) (playStream, error) {
	ctx, cancel := context.WithCancel(ctx)
	p := &connectPlay{session: s, ctx: ctx, cancel: cancel, ready: make(chan struct{}, 1), finding: map[uint64]context.CancelFunc{}}
	go func() {
		select {
		case <-s.done.Done():
			cancel()
		case <-ctx.Done():
		}
	}()
	return p, nil
}

// connectPlay: the Play stream's part over the edge's calls. One game page at a time (a new
// watch or a search ends the last watch, as a tab leaves the page); responses are queued without
// bound, as the Play stream's are read whenever the player looks.
type connectPlay struct {
	session *connectSession
	ctx     context.Context
	cancel  context.CancelFunc

	mu      sync.Mutex
	queue   []*playv1.PlayResponse
	failed  error
	ready   chan struct{}
	finding map[uint64]context.CancelFunc // searches by their correlation id
	watch   context.CancelFunc            // the game page's watch
}

func (p *connectPlay) push(response *playv1.PlayResponse) {
	p.mu.Lock()
	p.queue = append(p.queue, response)
	p.mu.Unlock()
	select {
	case p.ready <- struct{}{}:
	default:
	}
}

// fail ends the stream: Recv returns err once the responses before it are read.
func (p *connectPlay) fail(err error) {
	p.mu.Lock()
	if p.failed == nil {
		p.failed = err
	}
	p.mu.Unlock()
	p.cancel()
	select {
	case p.ready <- struct{}{}:
	default:
	}
}

// answerError: a call's error as the Play stream answers an action: a refusal when the edge
// answered it, the stream's end when the call got no answer (a lost connection).
func (p *connectPlay) answerError(ctx context.Context, correlation uint64, err error) {
	if ctx.Err() != nil {
		return // withdrawn (a new page) or the stream is over
	}
	var edge *edgeError
	if errors.As(err, &edge) && edge.answered {
		p.push(&playv1.PlayResponse{CorrelationId: correlation, Kind: &playv1.PlayResponse_Refusal{Refusal: edge.refusal()}})
		return
	}
	p.fail(err)
}

func (p *connectPlay) Recv() (*playv1.PlayResponse, error) {
	for {
		p.mu.Lock()
		if len(p.queue) > 0 {
			response := p.queue[0]
			p.queue[0] = nil
			p.queue = p.queue[1:]
			p.mu.Unlock()
			return response, nil
		}
		failed := p.failed
		p.mu.Unlock()
		if failed != nil {
			return nil, failed
		}
		select {
		case <-p.ready:
		case <-p.ctx.Done():
			p.fail(&edgeError{code: codes.Canceled, message: p.ctx.Err().Error()})
		}
	}
}

func (p *connectPlay) Send(request *playv1.PlayRequest) error {
	p.mu.Lock()
	failed := p.failed
	p.mu.Unlock()
	if failed != nil {
		return failed
	}
	id := request.GetCorrelationId()
	switch action := request.GetAction().(type) {
	case *playv1.PlayRequest_SetOptions:
		// No batches over the edge: answered with the options in force, as the Play stream answers.
		p.push(&playv1.PlayResponse{CorrelationId: id, Kind: &playv1.PlayResponse_OptionsSet{OptionsSet: &playv1.PlayOptions{}}})
	case *playv1.PlayRequest_FindMatch:
		// LobbyService.FindMatch has no watch to start (it refuses one): the MatchFound goes back
		// without watch_started, and the player asks for the game's watch itself.
		search := proto.Clone(action.FindMatch).(*playv1.FindMatchRequest)
		search.Watch = false
		ctx, cancel := context.WithCancel(p.ctx)
		p.mu.Lock()
		p.finding[id] = cancel
		p.mu.Unlock()
		p.leavePage()
		go p.find(ctx, id, search)
	case *playv1.PlayRequest_StopFinding:
		p.mu.Lock()
		cancel := p.finding[action.StopFinding.GetFindCorrelationId()]
		p.mu.Unlock()
		if cancel != nil {
			cancel()
		}
		p.push(&playv1.PlayResponse{CorrelationId: id, Kind: &playv1.PlayResponse_MatchUpdate{MatchUpdate: &playv1.FindMatchResponse{}}})
	case *playv1.PlayRequest_Watch:
		p.leavePage()
		ctx, cancel := context.WithCancel(p.ctx)
		p.mu.Lock()
		p.watch = cancel
		p.mu.Unlock()
		go p.watchGame(ctx, id, action.Watch.GetGameId(), action.Watch.GetAfterEventId())
	case *playv1.PlayRequest_StopWatching:
		p.leavePage()
		ack := &playv1.GetGameResponse{Summary: &playv1.GameSummary{GameId: action.StopWatching.GetGameId()}}
		p.push(&playv1.PlayResponse{CorrelationId: id, Kind: &playv1.PlayResponse_Watching{Watching: ack}})
	case *playv1.PlayRequest_SubmitMove:
		go func() {
			var answer playv1.SubmitMoveResponse
			if err := p.session.unary(p.ctx, "GameService/SubmitMove", action.SubmitMove, &answer); err != nil {
				p.answerError(p.ctx, id, err)
				return
			}
			p.push(&playv1.PlayResponse{CorrelationId: id, Kind: &playv1.PlayResponse_MoveAccepted{MoveAccepted: &answer}})
		}()
	case *playv1.PlayRequest_Resign:
		go func() {
			var answer playv1.ResignResponse
			if err := p.session.unary(p.ctx, "GameService/Resign", action.Resign, &answer); err != nil {
				p.answerError(p.ctx, id, err)
				return
			}
			p.push(&playv1.PlayResponse{CorrelationId: id, Kind: &playv1.PlayResponse_Resigned{Resigned: &answer}})
		}()
	case *playv1.PlayRequest_Ping:
		p.push(&playv1.PlayResponse{CorrelationId: id, Kind: &playv1.PlayResponse_Pong{Pong: &playv1.Pong{Nonce: action.Ping.GetNonce()}}})
	default:
		return status.Errorf(codes.Unimplemented, "the web edge's players do not send %T", action)
	}
	return nil
}

// leavePage: the game page's watch ends (its connection with it).
func (p *connectPlay) leavePage() {
	p.mu.Lock()
	watch := p.watch
	p.watch = nil
	p.mu.Unlock()
	if watch != nil {
		watch()
	}
}

func (p *connectPlay) find(ctx context.Context, id uint64, search *playv1.FindMatchRequest) {
	defer func() {
		p.mu.Lock()
		delete(p.finding, id)
		p.mu.Unlock()
	}()
	err := p.session.stream(ctx, "LobbyService/FindMatch", search,
		func() proto.Message { return new(playv1.FindMatchResponse) },
		func(m proto.Message) {
			update := m.(*playv1.FindMatchResponse)
			p.push(&playv1.PlayResponse{CorrelationId: id, Kind: &playv1.PlayResponse_MatchUpdate{MatchUpdate: update}})
		})
	if err != nil {
		p.answerError(ctx, id, err)
	}
}

// watchGame: the game page: its view (GetGame: the `watching` answer), then its events after
// that view (WatchGame from the view's last event id, so that nothing between the two is
// missed and nothing in the view comes again).
func (p *connectPlay) watchGame(ctx context.Context, id uint64, gameID, after string) {
	var view playv1.GetGameResponse
	if err := p.session.unary(ctx, "GameService/GetGame", &playv1.GetGameRequest{GameId: gameID}, &view); err != nil {
		p.answerError(ctx, id, err)
		return
	}
	p.push(&playv1.PlayResponse{CorrelationId: id, Kind: &playv1.PlayResponse_Watching{Watching: &view}})
	if after == "" {
		after = view.GetLastEventId()
	}
	err := p.session.stream(ctx, "GameService/WatchGame", &playv1.WatchGameRequest{GameId: gameID, AfterEventId: after},
		func() proto.Message { return new(playv1.WatchGameResponse) },
		func(m proto.Message) {
			if ctx.Err() != nil {
				return // the page was left meanwhile
			}
			w := m.(*playv1.WatchGameResponse)
			delivery := &playv1.GameEventDelivery{GameId: gameID, Event: w.GetEvent(), TurnDeadline: w.GetTurnDeadline(), Status: w.GetStatus()}
			p.push(&playv1.PlayResponse{Kind: &playv1.PlayResponse_Event{Event: delivery}})
		})
	// A watch that fails while the game goes on leaves the player blind: the stream ends, as the
	// Play stream would, and the player starts again (a page reload).
	if err != nil && ctx.Err() == nil {
		p.fail(err)
	}
}

// webEdge: main.go's --web (the edges' base URLs) and --web-share (the share of the players on them).
var webEdge struct {
	urls  []string
	share float64
}

// splitTransport: player i on the web edge when onWeb(i, share), on gRPC otherwise.
type splitTransport struct {
	native, web transport
	share       float64
}

func (t splitTransport) signIn(ctx context.Context, index int) (session, error) {
	if onWeb(index, t.share) {
		return t.web.signIn(ctx, index)
	}
	return t.native.signIn(ctx, index)
}

// onWeb: the golden-ratio sequence over the player index, so that the share holds at every
// count and falls on players and spectators alike (every 1/share-th index could fall on the
// spectators' own pattern, capacity.spectator).
func onWeb(index int, share float64) bool {
	_, fraction := math.Modf(float64(index+1) * 0.6180339887498949)
	return fraction < share
}

// transportOf: "web" for a stream over the edge, "grpc" for a Play stream.
func transportOf(stream playStream) string {
	if _, ok := stream.(*connectPlay); ok {
		return "web"
	}
	return "grpc"
}

// transportReport: one transport's players (started so far) and move -> opponent latencies,
// by the transport of the player whose stream delivered the move (the one who sees it).
type transportReport struct {
	Players        int64              `json:"players"`
	LatencyMS      map[string]float64 `json:"latency_ms"`
	LatencySamples []float64          `json:"latency_samples_ms"`
}

func transportReports(t transport, players int64, latencies map[string][]float64) map[string]transportReport {
	counts := map[string]int64{"grpc": players}
	if split, ok := t.(splitTransport); ok {
		counts["web"] = 0
		for i := int64(0); i < players; i++ {
			if onWeb(int(i), split.share) {
				counts["web"]++
			}
		}
		counts["grpc"] -= counts["web"]
	}
	reports := make(map[string]transportReport, len(counts))
	for name, count := range counts {
		reports[name] = transportReport{Players: count, LatencyMS: percentiles(latencies[name]), LatencySamples: milliseconds(latencies[name])}
	}
	return reports
}
