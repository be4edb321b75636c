package main

import (
	"context"
	"net"
	"strings"

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
	conn  *grpc.ClientConn
	auth  context.Context // carries the session token
	games playv1.GameServiceClient
}

func (t grpcTransport) signIn(ctx context.Context, index int) (session, error) {
	// Fixed flow-control windows turn off BDP probing, as the Python SDK's channels do.
	target := t.gateways[index%len(t.gateways)]
	options := []grpc.DialOption{grpc.WithInsecure(),
		grpc.WithInitialWindowSize(1 << 16), grpc.WithInitialConnWindowSize(1 << 16),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(codec{}))}
	if t.sources > 1 && strings.HasPrefix(target, "127.") {
		source := &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(1+(index/len(t.gateways))%t.sources))}
		options = append(options, grpc.WithContextDialer(func(ctx context.Context, address string) (net.Conn, error) {
			dialer := net.Dialer{LocalAddr: source}
			return dialer.DialContext(ctx, "tcp", address)
		}))
	}
	conn, err := grpc.DialContext(ctx, target, options...)
	if err != nil {
		return nil, err
	}
	signIn, err := playv1.NewAccountServiceClient(conn).SignInAsGuest(ctx, &playv1.SignInAsGuestRequest{})
	if err != nil {
		conn.Close()
		return nil, err
	}
	auth := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+signIn.GetSession().GetToken())
	return &grpcSession{conn: conn, auth: auth, games: playv1.NewGameServiceClient(conn)}, nil
}

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
