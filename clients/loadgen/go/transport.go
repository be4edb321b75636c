package main

import (
	"context"
	"net"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	playv1 "tafel.dev/gen/tafel/play/v1"
)

// The capacity players (human.go) reach the platform through these two interfaces only, so a
// second way in (the web edge's Connect protocol, as browsers speak it) can be added beside gRPC
// without touching the players' logic: it needs a signIn and a session whose play stream carries
// the same PlayRequest/PlayResponse messages.

// transport: how a player arrives (its own connection, a guest sign-in).
type transport interface {
	signIn(ctx context.Context, index int) (session, error)
}

// session: a signed-in player's calls.
type session interface {
	// play opens the player's Play stream, kept open for the whole run.
	play(ctx context.Context) (playStream, error)
	// liveGames: the newest live games of a type (a spectator's "live now" list).
	liveGames(ctx context.Context, game string, pageSize int32) ([]*playv1.GameSummary, error)
	close()
}

type playStream interface {
	Send(*playv1.PlayRequest) error
	Recv() (*playv1.PlayResponse, error)
}

// grpcTransport: a TCP connection of its own per player, to gateways[index % len], as main.go's players.
type grpcTransport struct {
	gateways []string
	// Loopback source addresses to spread the players over (127.0.0.1 to 127.0.0.<sources>): one
	// source address reaches one gateway port through at most the ephemeral port range (~28,000
	// connections), fewer than a capacity run's players.
	sources int
}

type grpcSession struct {
	transport grpcTransport
	index     int // the player's (its source address)
	gateway   int // gateways[gateway % len] is the one it is on
	conn      *grpc.ClientConn
	gone      chan struct{}   // closed once the connection to that gateway is lost
	auth      context.Context // carries the session token
	games     playv1.GameServiceClient
}

// dial: a ClientConn of the player's own to gateways[gateway % len], and a channel closed when the
// connection is lost: grpc-go's reader is always reading the socket, so a gateway's death is seen
// at once, even by a player who is thinking and so not reading its stream.
func (t grpcTransport) dial(ctx context.Context, gateway, index int) (*grpc.ClientConn, chan struct{}, error) {
	// Fixed flow-control windows turn off BDP probing, as the Python SDK's channels do.
	target := t.gateways[gateway%len(t.gateways)]
	gone := make(chan struct{})
	var once sync.Once
	dialer := net.Dialer{}
	if t.sources > 1 && strings.HasPrefix(target, "127.") {
		dialer.LocalAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(1+(index/len(t.gateways))%t.sources))}
	}
	options := []grpc.DialOption{grpc.WithInsecure(),
		grpc.WithInitialWindowSize(1 << 16), grpc.WithInitialConnWindowSize(1 << 16),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(codec{})),
		grpc.WithContextDialer(func(ctx context.Context, address string) (net.Conn, error) {
			conn, err := dialer.DialContext(ctx, "tcp", address)
			if err != nil {
				return nil, err
			}
			return &watchedConn{Conn: conn, lost: func() { once.Do(func() { close(gone) }) }}, nil
		})}
	conn, err := grpc.DialContext(ctx, target, options...)
	return conn, gone, err
}

// watchedConn: a socket that says when a read fails (the peer gone, or the socket closed).
type watchedConn struct {
	net.Conn
	lost func()
}

func (c *watchedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if err != nil {
		c.lost()
	}
	return n, err
}

func (t grpcTransport) signIn(ctx context.Context, index int) (session, error) {
	conn, gone, err := t.dial(ctx, index, index)
	if err != nil {
		return nil, err
	}
	signIn, err := playv1.NewAccountServiceClient(conn).SignInAsGuest(ctx, &playv1.SignInAsGuestRequest{})
	if err != nil {
		conn.Close()
		return nil, err
	}
	auth := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+signIn.GetSession().GetToken())
	return &grpcSession{transport: t, index: index, gateway: index, conn: conn, gone: gone, auth: auth,
		games: playv1.NewGameServiceClient(conn)}, nil
}

// failover: the session on the next gateway of the list, with the same token: sessions live in
// Redis, so every gateway knows it (a new sign-in would be another player, without its seats).
func (s *grpcSession) failover(ctx context.Context) error {
	conn, gone, err := s.transport.dial(ctx, s.gateway+1, s.index)
	if err != nil {
		return err
	}
	s.conn.Close()
	s.gateway++
	s.conn, s.gone, s.games = conn, gone, playv1.NewGameServiceClient(conn)
	return nil
}

func (s *grpcSession) lost() <-chan struct{} { return s.gone }

func (s *grpcSession) play(ctx context.Context) (playStream, error) {
	md, _ := metadata.FromOutgoingContext(s.auth)
	return s.games.Play(metadata.NewOutgoingContext(ctx, md))
}

func (s *grpcSession) liveGames(ctx context.Context, game string, pageSize int32) ([]*playv1.GameSummary, error) {
	md, _ := metadata.FromOutgoingContext(s.auth)
	answer, err := s.games.ListLiveGames(metadata.NewOutgoingContext(ctx, md),
		&playv1.ListLiveGamesRequest{Game: game, PageSize: pageSize})
	if err != nil {
		return nil, err
	}
	return answer.GetGames(), nil
}

func (s *grpcSession) close() { s.conn.Close() }

// newTransport: how the capacity players arrive: gRPC, or for a share of them (webEdge, from
// main.go's --web and --web-share) the web edge, as browsers do (connect.go).
func newTransport(gateways []string, sources int) transport {
	native := grpcTransport{gateways: gateways, sources: sources}
	if len(webEdge.urls) == 0 || webEdge.share <= 0 {
		return native
	}
	return splitTransport{native: native, web: connectTransport{urls: webEdge.urls, sources: sources}, share: webEdge.share}
}
