"""streamkit's benchmark suite: ``python -m benchmarks [--quick]`` (see ``benchmarks/RESULTS.md``).

``inputs`` generates seeded SSE streams, ``strategies`` holds what is compared (streamkit
deferred and with previews, a hand-written floor, httpx-sse, the SDKs' accumulators),
``measure`` times them side by side and measures memory, delays, concurrency and replay, and
``__main__`` prints the tables and writes the JSON results and the plot.
"""
