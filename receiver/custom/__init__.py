"""Pure decoders of Sounding's own JSON doors: errors, deploys, requests."""
