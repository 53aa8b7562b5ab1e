"""The SQL exporter: a bounded queue in front of a writer process."""
