package main

import (
	"fmt"

	"google.golang.org/protobuf/proto"
)

// codec: protobuf through google.golang.org/protobuf (API v2), which generated the messages.
// grpc-go 1.33's own codec (Debian's package) goes through github.com/golang/protobuf 1.3, which
// cannot read API v2 messages.
type codec struct{}

func (codec) Marshal(v interface{}) ([]byte, error) {
	message, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("not a protobuf message: %T", v)
	}
	return proto.Marshal(message)
}

func (codec) Unmarshal(data []byte, v interface{}) error {
	message, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("not a protobuf message: %T", v)
	}
	return proto.Unmarshal(data, message)
}

func (codec) Name() string { return "proto" }
