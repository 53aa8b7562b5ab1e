"""The wire form: a batch as plain rows, built for the writer process."""
