"""The forwarding exporter (`exporters: forward`): what a collector receives is
committed to a durable local queue (the outbox table of the local store) and sent
upstream, at least once, to a Sounding gateway or any OTLP backend.

    encode.py    a batch -> upstream request bodies (pure; run in decode workers)
    config.py    defaults, checks and per-signal routes
    enqueue.py   group commit of bodies into the outbox
    sender.py    one loop per signal: send in order, retry, drop what is refused
    client.py    one HTTP request upstream, and what its answer means
    exporter.py  the component and its factory
"""
