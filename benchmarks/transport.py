"""``python -m benchmarks.transport [--helper]``: the re-emitting transport's cost under the openai SDK.

One generated OpenAI Chat response with one call of 128 KiB of arguments (``benchmarks.inputs``)
is read through the openai SDK by an ``httpx2.Client`` whose transport is ``httpx2.MockTransport``
(no sockets: what is timed is the CPU cost), with and without
``streamkit.integrations.httpx2.Transport`` in front of it, in the same run, alternating:

- ``chunks``: ``chat.completions.create(stream=True)``, every chunk read and each call's
  arguments joined by index, as a framework's own decoder does;
- ``helper`` (with ``--helper``; slow without the transport): ``chat.completions.stream`` to its
  final completion, whose partial parse of the arguments on every fragment is what it costs.

The re-emitting alone (``Session`` over the same chunks) is timed too. The three are run in turn;
each figure is the best of ``--repeat`` runs; the ratio is with / without the transport.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Iterator

import httpx2
import openai

from streamkit._limits import Limits
from streamkit._reemit import Session
from streamkit.integrations.httpx2 import Transport
from tests.models import OPENAI

from .inputs import Case, make_case

SIZE = 128 * 1024
CHUNK = 16 * 1024  # bytes per read, about what a socket read gives on a fast stream


def _chunks(data: bytes) -> Iterator[bytes]:
    for start in range(0, len(data), CHUNK):
        yield data[start : start + CHUNK]


def _client(data: bytes, reemit: bool) -> openai.OpenAI:
    def answer(request: httpx2.Request) -> httpx2.Response:
        headers = {"content-type": "text/event-stream"}
        return httpx2.Response(200, headers=headers, content=_chunks(data))

    inner = httpx2.MockTransport(answer)
    transport: httpx2.BaseTransport = Transport(inner) if reemit else inner
    http = httpx2.Client(transport=transport)
    return openai.OpenAI(base_url="http://bench.invalid/v1", api_key="sk-bench", http_client=http, max_retries=0)


def _chunks_run(client: openai.OpenAI, want: str) -> None:
    joined: dict[int, list[str]] = {}
    for chunk in client.chat.completions.create(model=OPENAI, messages=[], stream=True):
        for choice in chunk.choices:
            for call in choice.delta.tool_calls or ():
                joined.setdefault(call.index, []).append(call.function.arguments or "")
    assert len("".join(joined[0])) >= len(want) * 0.9  # compact JSON may be a little shorter


def _helper_run(client: openai.OpenAI, want: str) -> None:
    with client.chat.completions.stream(model=OPENAI, messages=[]) as stream:
        for _ in stream:
            pass
        completion = stream.get_final_completion()
    [call] = completion.choices[0].message.tool_calls or []
    assert len(call.function.arguments) >= len(want) * 0.9  # compact JSON may be a little shorter


def _reemit_run(data: bytes) -> None:
    session = Session("openai_chat", "/v1/chat/completions", None, Limits())
    for chunk in _chunks(data):
        session.feed(chunk)
    session.flush()
    assert session.failure is None and len(session.calls) == 1


def _best(run: Callable[[], None], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def _compare(
    read: Callable[[openai.OpenAI, str], None], clients: tuple[openai.OpenAI, openai.OpenAI], case: Case, repeat: int
) -> tuple[float, float, float]:
    """The best times of ``read`` without and with the transport, and of the re-emitting alone.

    The three are run in turn, ``repeat`` times, so that a busy machine weighs on each alike.
    """
    alone, wrapped = clients
    want = case.texts[0]
    best = [float("inf")] * 3
    for _ in range(repeat):
        runs = (lambda: read(alone, want), lambda: read(wrapped, want), lambda: _reemit_run(case.data))
        best = [min(time_so_far, _best(run, 1)) for time_so_far, run in zip(best, runs, strict=True)]
    return best[0], best[1], best[2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--fragment", type=int, default=4, help="characters per argument fragment")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure; the best is kept")
    parser.add_argument("--helper", action="store_true", help="also time chat.completions.stream (slow)")
    args = parser.parse_args()
    case = make_case("openai_chat", SIZE, args.fragment, 1)
    clients = _client(case.data, False), _client(case.data, True)
    print(f"openai_chat, 1 call, {case.argument_bytes} argument bytes, {case.events} events, {len(case.data)} bytes")
    reads = [("chunks", _chunks_run)] + ([("helper", _helper_run)] if args.helper else [])
    for name, read in reads:
        sdk, with_transport, reemit = _compare(read, clients, case, args.repeat)
        print(f"  {name:6}  SDK alone {sdk * 1000:9.1f} ms   SDK + Transport {with_transport * 1000:9.1f} ms", end="")
        print(f"   ratio {with_transport / sdk:.2f}   (re-emitting alone {reemit * 1000:.1f} ms)")


if __name__ == "__main__":
    main()
