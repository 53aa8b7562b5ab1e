"""Read-side queries of the dashboard and its JSON read API.

Every SQL statement the dashboard runs lives in this package, so the storage layout
can change behind it: a change of tables only has to keep these functions'
signatures and results. Each function takes the Store and plain values (a project
id, epoch times, filters) and returns frozen dataclasses of plain values; none of
them writes. Time units follow the schema: microseconds for events, nanoseconds
for spans, epoch seconds for rollup buckets and for chart series.

Modules: `projects`, `errors` (error groups, occurrences, trends, status history,
errors of a trace), `events` (one occurrence with all it carried), `facets` (a group's
environments, releases, services, levels and tags; the error list's filters),
`performance` (request rollups and latency quantiles),
`deploys` (deploys and their before/after correlation), `traces` (span search and
one trace), `logs` (log record search, the live tail's cursor, one trace's records),
`metrics` (metric names and one metric's series over time: its points aggregated per
step in `metric_lines`, the bucket arithmetic of histograms in `metric_buckets`).
"""
