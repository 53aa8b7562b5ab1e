"""The runtime machinery: child processes and the pipe to them, the pipeline and its decode
workers, admission, the component registry, logging and telemetry."""
