"""What a benchmark harness reports, read into benchmarks and figures.

``formats`` parses each supported harness's report (google-benchmark, Go's ``testing``,
Rust's bencher, pytest-benchmark, pyperf, benchbot's own JSON lines) into ``Parsed``
entries, and builds the filter that makes a harness run only some of its benchmarks. A new
harness's parser goes here. Pure: the sandbox's worker parses a run's report with it, so
it needs nothing but the standard library.
"""
