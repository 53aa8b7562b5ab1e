"""One handler per signal, shared by every door that receives it.

A signal module (errors.py, deploys.py, requests.py, traces.py) turns one decoded
document into records, hands them to the pipeline and returns an Outcome. The
doors add only their protocol's framing: the HTTP door (receiver/http/door.py) reads,
inflates and authenticates the body; the gRPC door (receiver/grpc/door.py) turns
the message into the same document and the outcome into the reply message. Both
register every signal from one list, receiver/signals/table.py: adding a signal
is a module here and one row there.
"""
