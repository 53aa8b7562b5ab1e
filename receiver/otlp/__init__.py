"""OTLP's pure decoders: protobuf and OTLP/JSON in, records out."""
