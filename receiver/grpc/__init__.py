"""The gRPC receiver: one server, every signal's method."""
