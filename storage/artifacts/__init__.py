"""Source map artifacts and releases, as `sentry-cli` and the bundler plugins upload
them (docs/source-maps.md): chunks by checksum (chunks.py), bundles assembled from
them and checked (bundle.py, assemble.py), releases and their deploys (releases.py),
and what symbolication and the release page read (lookup.py)."""
