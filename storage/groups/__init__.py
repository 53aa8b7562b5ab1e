"""Error groups changed by a person: status changes, merging."""
