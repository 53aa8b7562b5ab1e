"""The writer: what one group commit does inside its one transaction."""
