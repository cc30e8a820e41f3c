"""``python -m benchmarks.translate``: streamkit serve against LiteLLM's proxy, translating the same sessions.

Two translations, each proxy serving both from one OpenAI Chat upstream: an Anthropic Messages
client (Claude Code: ``/v1/messages``) and an OpenAI Responses client (Codex: ``/v1/responses``).
The upstream is the repository's loopback server (``tests/server.py``) in this process; each
request gets the next of a pool of realistic turns (``benchmarks.turns``: 40 text tokens, then
two ``append_note`` calls of about 1.5 KB of arguments each in fragments of 1 to 8 characters,
with OpenAI's chunk shape and padding), each with its own response id and call ids.

- CPU per stream: ``--streams`` streams read one after another through each proxy and format,
  at the upstream's full speed; the CPU time (user + system, from /proc) of the proxy's process
  tree over them, divided by their number. Rows and formats are interleaved, ``--repeat`` times;
  the median run. The client's and the upstream's work are not counted.
- Added latency to the first completed call: the client's time from sending the request to the
  end of the first call (Anthropic's ``content_block_stop`` of the first ``tool_use`` block, the
  Responses ``function_call`` item's end), minus the same for a client reading the Chat stream
  directly from the upstream, which ends a call when the next one opens (as the openai SDKs'
  stream helpers do). The upstream sleeps ``--drip`` seconds before each write here; the two
  streams of a pair are the same turn (the dripping route serves each turn twice in a row), read
  back to back, in alternating order. Medians of the differences.
- Concurrency: ``--concurrency`` streams at once (a comma list), each proxy with one worker:
  what completed with the right calls within ``--deadline`` seconds, what failed, p50/p99 of
  each stream's time to its last byte, and the proxy's CPU time.
- Correctness: every stream above is decoded in the client (streamkit's ``Assembler``; the CPU
  streams by ``collect_turn`` on the bytes received) and its calls compared with the turn's.
  Then each proxy is asked, through the official SDKs (the Anthropic SDK's message accumulator,
  the openai SDK's Responses accumulator), for one benchmark turn and for two recorded Chat
  streams, ``fixtures/openai_chat/parallel_calls_all_index_zero.sse`` (two calls on index 0)
  and ``length_truncated.sse`` (a call cut by the output limit): what each client is handed.

LiteLLM's proxy is run from ``--litellm`` or ``$STREAMKIT_BENCH_LITELLM`` (a ``litellm``
command, in its own virtualenv: see benchmarks/RESULTS.md); without it, streamkit runs alone.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import os
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import httpx
import orjson

from streamkit import Assembler, Provider, ToolCall, collect_turn
from tests.server import LoopbackServer, Reply

from .serve import KEY, Proxy, _free_port, _running
from .turns import Turn, make_turn

#: The client formats translated, each with its path on the proxy.
PATHS = {"anthropic": "/v1/messages", "openai_responses": "/v1/responses"}
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "openai_chat"
#: The recorded Chat streams replayed through both proxies, by the model name that routes to them.
CASES = {"fx-parallel": "parallel_calls_all_index_zero.sse", "fx-length": "length_truncated.sse"}
MODELS = ("bench", "drip", *CASES)
HEADERS = {"authorization": f"Bearer {KEY}", "x-api-key": KEY}


def _schema(**properties: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: {"type": kind} for name, kind in properties.items()},
        "required": [name for name, kind in properties.items() if kind == "string"],
    }


#: The tools every request declares: the turns' ``append_note`` and the fixtures' three.
TOOLS = {
    "append_note": _schema(path="string", append="boolean", text="string"),
    "get_weather": _schema(city="string"),
    "get_stock": _schema(ticker="string"),
    "write_file": _schema(path="string", content="string"),
}


def request(fmt: str, model: str) -> dict[str, Any]:
    """A streamed request of ``fmt`` for ``model``, with the tools, as the client sends it."""
    if fmt == "anthropic":
        tools = [{"name": name, "description": name, "input_schema": schema} for name, schema in TOOLS.items()]
        messages = [{"role": "user", "content": "Write the notes."}]
        return {"model": model, "max_tokens": 4096, "stream": True, "messages": messages, "tools": tools}
    tools = [{"type": "function", "name": name, "description": name, "parameters": s} for name, s in TOOLS.items()]
    return {"model": model, "input": "Write the notes.", "stream": True, "tools": tools}


# -- the upstream --------------------------------------------------------------------------------


class Upstream(dict[str, Reply]):
    """The loopback server's routes: ``/v1`` the next turn of the pool at full speed, ``/drip/v1``
    the next turn twice in a row (a pair), ``delay`` s before each write; the fixtures as recorded."""

    def __init__(self, turns: list[Turn], per_write: int, delay: float) -> None:
        super().__init__()
        self.turns = turns
        self.per_write = per_write
        self.delay = delay
        self._next = itertools.count()
        self._dripped = itertools.count()
        self._lock = threading.Lock()
        for model, name in CASES.items():
            events = [event + b"\n\n" for event in (FIXTURES / name).read_bytes().split(b"\n\n") if event.strip()]
            self[f"/{model}/v1/chat/completions"] = Reply(writes=events)

    def writes(self, turn: Turn) -> list[bytes]:
        events = turn.events
        return [b"".join(events[at : at + self.per_write]) for at in range(0, len(events), self.per_write)]

    def get(self, key: str, default: Reply | None = None) -> Reply | None:  # type: ignore[override]
        with self._lock:
            if key == "/v1/chat/completions":
                return Reply(writes=self.writes(self.turns[next(self._next) % len(self.turns)]))
            if key == "/drip/v1/chat/completions":
                turn = self.turns[next(self._dripped) // 2 % len(self.turns)]
                return Reply(writes=self.writes(turn), delay=self.delay)
        return super().get(key, default)

    def reset_pairs(self) -> None:
        """Start the dripping route on a new pair (after a stream that was not one of a pair)."""
        with self._lock:
            self._dripped = itertools.count(2 * (next(self._dripped) // 2 + 1))


def _base(upstream: str, model: str) -> str:
    return {"bench": upstream, "drip": upstream.replace("/v1", "/drip/v1")}.get(model) or upstream.replace(
        "/v1", f"/{model}/v1"
    )


# -- the proxies ---------------------------------------------------------------------------------


@contextlib.contextmanager
def streamkit_proxy(upstream: str, early_close: bool) -> Iterator[Proxy]:
    """``streamkit serve``, one worker: both client formats on the Chat upstream, a route per model."""
    port = _free_port()
    config = Path(tempfile.mkdtemp()) / "serve.toml"
    early = "early_close = true\n" if early_close else ""
    config.write_text(
        "".join(
            f'[[route]]\nformat = "{fmt}"\nupstream_format = "openai_chat"\nupstream = "{_base(upstream, model)}"\n'
            f'models = ["{model}"]\n{early}'
            for fmt in PATHS
            for model in MODELS
        )
    )
    command = [sys.executable, "-m", "streamkit", "serve", "--config", str(config), "--port", str(port)]
    command += ["--workers", "1", "--proxy-key-env", "STREAMKIT_BENCH_KEY"]
    name = "streamkit serve" + (" --early-close" if early_close else "")
    with _running(command, f"http://127.0.0.1:{port}", "/healthz", name, {"STREAMKIT_BENCH_KEY": KEY}) as proxy:
        proxy.name = name
        yield proxy


@contextlib.contextmanager
def litellm_proxy(litellm: str, upstream: str) -> Iterator[Proxy]:
    """LiteLLM's proxy, one worker, each model an ``openai/`` deployment on the Chat upstream.

    ``use_chat_completions_api`` makes it send Chat Completions: without it, an ``openai/``
    model's Messages and Responses requests go to the upstream's ``/responses``.
    """
    port = _free_port()
    with tempfile.TemporaryDirectory() as folder:
        config = Path(folder) / "config.yaml"
        config.write_text(
            "model_list:\n"
            + "".join(
                f"  - model_name: {model}\n    litellm_params:\n      model: openai/{model}\n"
                f"      api_base: {_base(upstream, model)}\n      api_key: sk-bench\n"
                "      use_chat_completions_api: true\n"
                for model in MODELS
            )
            + "router_settings:\n  disable_cooldowns: true\n"
        )
        command = [litellm, "--config", str(config), "--port", str(port), "--num_workers", "1"]
        environment = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_LOG": "ERROR", "LITELLM_MASTER_KEY": KEY}
        with _running(command, f"http://127.0.0.1:{port}", "/health/liveliness", "litellm", environment) as proxy:
            yield proxy


def _settle(proxy: Proxy, quiet: float = 0.05) -> None:
    """Wait (up to a minute) until the proxy spends under ``quiet`` s of CPU in a second: streams
    a deadline cut may still be running in it."""
    for _ in range(60):
        before = proxy.cpu()
        time.sleep(1)
        if proxy.cpu() - before < quiet:
            return


# -- the client ----------------------------------------------------------------------------------


@dataclass
class Stream:
    first: float  # seconds to the first completed call
    last: float  # seconds to the last byte
    calls: tuple[tuple[str | None, Any], ...]  # each call's name and input, in the client's decoding
    chunks: list[bytes]


async def one_stream(client: httpx.AsyncClient, url: str, fmt: str, model: str, direct: bool = False) -> Stream:
    """One streamed request; the client decodes as it reads (``direct``: the Chat stream itself,
    a call ending when the next one opens)."""
    body = {"model": model, "messages": [{"role": "user", "content": "go"}], "stream": True} if direct else None
    assembler = Assembler(cast(Provider, "openai_chat" if direct else fmt), early_close=direct)
    calls: list[tuple[str | None, Any]] = []
    chunks: list[bytes] = []
    first = 0.0
    started = time.perf_counter()
    async with client.stream("POST", url, json=body or request(fmt, model), headers=HEADERS) as response:
        if response.status_code != 200:
            await response.aread()
            raise RuntimeError(f"HTTP {response.status_code}: {response.text[:200]}")
        async for chunk in response.aiter_raw():
            chunks.append(chunk)
            done = [(item.name, item.input) for item in assembler.feed(chunk) if isinstance(item, ToolCall)]
            if done and not first:
                first = time.perf_counter() - started
            calls += done
    last = time.perf_counter() - started
    calls += [(item.name, item.input) for item in assembler.flush() if isinstance(item, ToolCall)]
    return Stream(first, last, tuple(calls), chunks)


def _expected(turn: Turn) -> tuple[tuple[str | None, Any], ...]:
    return tuple(("append_note", value) for value in turn.arguments)


# -- the measurements ----------------------------------------------------------------------------


@dataclass
class Cell:
    """One proxy and client format's figures, over the repeats."""

    cpu: list[float] = field(default_factory=list)
    first: list[float] = field(default_factory=list)
    last: list[float] = field(default_factory=list)
    wrong: int = 0


def measure_cpu(proxy: Proxy, fmt: str, streams: int, good: set[str]) -> tuple[float, int]:
    """CPU seconds per stream at full speed, and how many streams did not decode (``collect_turn``
    on the bytes the client got) to one of the pool's turns."""

    async def run() -> list[Stream]:
        async with httpx.AsyncClient(timeout=600) as client:
            return [await one_stream(client, proxy.url + PATHS[fmt], fmt, "bench") for _ in range(streams)]

    asyncio.run(_warm(proxy, fmt))
    before = proxy.cpu()
    done = asyncio.run(run())
    spent = (proxy.cpu() - before) / streams
    wrong = 0
    for stream in done:
        turn = collect_turn(stream.chunks, cast(Provider, fmt))
        wrong += repr(tuple((call.name, getattr(call, "input", None)) for call in turn.calls)) not in good
    return spent, wrong


async def _warm(proxy: Proxy, fmt: str) -> None:
    async with httpx.AsyncClient(timeout=600) as client:
        for _ in range(3):
            await one_stream(client, proxy.url + PATHS[fmt], fmt, "bench")


def measure_latency(proxy: Proxy, fmt: str, direct: str, pairs: int, upstream: Upstream) -> tuple[list[Stream], int]:
    """``pairs`` pairs of dripping streams, through the proxy and directly, the same turn each;
    the differences (first call, last byte) and how many pairs decoded differently."""

    async def run() -> list[tuple[Stream, Stream]]:
        out = []
        async with httpx.AsyncClient(timeout=600) as client:
            for number in range(pairs):
                through = one_stream(client, proxy.url + PATHS[fmt], fmt, "drip")
                plain = one_stream(client, direct, fmt, "drip", direct=True)
                if number % 2:
                    theirs = await plain
                    out.append((await through, theirs))
                else:
                    ours = await through
                    out.append((ours, await plain))
        return out

    upstream.reset_pairs()
    done = asyncio.run(run())
    wrong = sum(ours.calls != theirs.calls for ours, theirs in done)
    diffs = [Stream(ours.first - theirs.first, ours.last - theirs.last, (), []) for ours, theirs in done]
    return diffs, wrong


@dataclass
class Crowd:
    streams: int
    ok: int
    wrong: int
    errors: Counter[str]
    unfinished: int
    wall: float
    cpu: float
    p50: float
    p99: float


def measure_crowd(proxy: Proxy, fmt: str, streams: int, deadline: float, good: set[str]) -> Crowd:
    """``streams`` streams started at once; those not done at ``deadline`` s are cancelled."""

    async def run() -> tuple[list[asyncio.Task[Stream]], float]:
        limits = httpx.Limits(max_connections=streams, max_keepalive_connections=streams)
        async with httpx.AsyncClient(timeout=deadline + 60, limits=limits) as client:
            url = proxy.url + PATHS[fmt]
            tasks = [asyncio.create_task(one_stream(client, url, fmt, "bench")) for _ in range(streams)]
            started = time.perf_counter()
            _, pending = await asyncio.wait(tasks, timeout=deadline)
            wall = time.perf_counter() - started
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        return tasks, wall

    asyncio.run(_warm(proxy, fmt))
    before = proxy.cpu()
    tasks, wall = asyncio.run(run())
    _settle(proxy)
    spent = proxy.cpu() - before
    errors: Counter[str] = Counter()
    times, wrong, unfinished = [], 0, 0
    for task in tasks:
        if task.cancelled():
            unfinished += 1
        elif task.exception() is not None:
            errors[type(task.exception()).__name__] += 1
        elif repr(task.result().calls) in good:
            times.append(task.result().last)
        else:
            wrong += 1
    p50, p99 = _quantiles(times)
    return Crowd(streams, len(times), wrong, errors, unfinished, wall, spent, p50, p99)


def _quantiles(values: list[float]) -> tuple[float, float]:
    if not values:
        return float("nan"), float("nan")
    ordered = sorted(values)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]


# -- what each client is handed ------------------------------------------------------------------


def handed(proxy: Proxy, fmt: str, model: str) -> str:
    """What the official SDK's accumulator makes of the proxy's answer: each call's name and
    arguments, the stop reason, or the error the SDK raised."""
    try:
        if fmt == "anthropic":
            import anthropic

            sdk = anthropic.Anthropic(base_url=proxy.url, api_key=KEY, max_retries=0)
            with sdk, sdk.messages.stream(**_unstreamed(fmt, model)) as stream:
                message = stream.get_final_message()
            parts = [_shown(b.name, b.input) for b in message.content if b.type == "tool_use"]
            text = "".join(b.text for b in message.content if b.type == "text")
            return _summary(parts, text, f"stop_reason={message.stop_reason}")
        import openai

        client = openai.OpenAI(base_url=proxy.url + "/v1", api_key=KEY, max_retries=0)
        with client, client.responses.stream(**_unstreamed(fmt, model)) as events:
            response = events.get_final_response()
        parts = [_shown(item.name, item.arguments) for item in response.output if item.type == "function_call"]
        text = "".join(p.text for item in response.output if item.type == "message" for p in item.content)
        reason = response.incomplete_details.reason if response.incomplete_details else None
        return _summary(parts, text, f"status={response.status}" + (f" ({reason})" if reason else ""))
    except Exception as exc:  # what the client sees, reported as such
        return f"raised {type(exc).__name__}: {str(exc)[:300]}"


def _unstreamed(fmt: str, model: str) -> dict[str, Any]:
    """The request as an SDK's ``stream()`` takes it (it sets ``stream`` itself)."""
    return {key: value for key, value in request(fmt, model).items() if key != "stream"}


def _shown(name: str, arguments: Any) -> str:
    text = arguments if isinstance(arguments, str) else repr(arguments)
    return f"{name}({text if len(text) <= 80 else text[:40] + f'... {len(text)} chars'})"


def _summary(parts: list[str], text: str, end: str) -> str:
    said = f" text {text[:60]!r}" if text else ""
    return f"{len(parts)} call(s) {', '.join(parts)}{said}; {end}"


def upstream_requests(server: LoopbackServer, since: int, model: str) -> int:
    """How many requests the upstream got for ``model`` since ``since`` (a proxy asking again)."""
    return sum(request.target.startswith(f"/{model}/") for request in server.requests[since:])


# -- the run -------------------------------------------------------------------------------------

Maker = Callable[[], contextlib.AbstractContextManager[Proxy]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--litellm", default=os.environ.get("STREAMKIT_BENCH_LITELLM"),
                        help="the litellm command (its proxy); default $STREAMKIT_BENCH_LITELLM")  # fmt: skip
    parser.add_argument("--streams", type=int, default=10, help="streams per CPU and latency measurement")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--concurrency", default="50", help="concurrent streams, a comma list (e.g. 200,1000)")
    parser.add_argument("--deadline", type=float, default=60.0, help="seconds a concurrent run may take")
    parser.add_argument(
        "--size", type=int, default=2048, help="the turns' size parameter: about 1.5 KB of arguments per call"
    )
    parser.add_argument("--per-write", type=int, default=4, help="SSE events per upstream write")
    parser.add_argument("--drip", type=float, default=0.001, help="seconds before each upstream write (latency)")
    args = parser.parse_args()
    if args.litellm and not Path(args.litellm).exists():
        parser.error(f"--litellm {args.litellm}: no such file")
    turns = [make_turn("openai_chat", args.size, 2, serial=serial) for serial in range(64)]
    good = {repr(_expected(turn)) for turn in turns}
    upstream = Upstream(turns, args.per_write, args.drip)
    server = LoopbackServer()
    server.routes = upstream
    base = server.url("/v1")
    sizes = [len(event) for turn in turns for event in turn.events]
    print(
        f"upstream turn: {statistics.mean(len(t.data) for t in turns):.0f} bytes, "
        f"{statistics.mean(len(t.events) for t in turns):.0f} events of {statistics.median(sizes):.0f} B (median), "
        f"2 calls of {statistics.mean(len(orjson.dumps(v)) for t in turns for v in t.arguments):.0f} B of "
        f"arguments each, {args.per_write} events a write; a pool of {len(turns)} turns"
    )
    rows: list[tuple[str, Maker]] = [
        ("streamkit serve", lambda: streamkit_proxy(base, False)),
        ("streamkit --early-close", lambda: streamkit_proxy(base, True)),
    ]
    if args.litellm:
        rows.append(("litellm proxy", lambda: litellm_proxy(args.litellm, base)))
    else:
        print("LiteLLM's proxy skipped: give its litellm command with --litellm or $STREAMKIT_BENCH_LITELLM")
    cells = {(name, fmt): Cell() for name, _ in rows for fmt in PATHS}
    direct = base.replace("/v1", "/drip/v1") + "/chat/completions"
    try:
        with contextlib.ExitStack() as stack:
            proxies = {name: stack.enter_context(make()) for name, make in rows}
            for repeat in range(args.repeat):
                order = rows[repeat % len(rows) :] + rows[: repeat % len(rows)]
                for name, _ in order:
                    for fmt in PATHS:
                        cell, proxy = cells[name, fmt], proxies[name]
                        spent, wrong = measure_cpu(proxy, fmt, args.streams, good)
                        cell.cpu.append(spent)
                        diffs, unequal = measure_latency(proxy, fmt, direct, args.streams, upstream)
                        cell.first += [d.first for d in diffs]
                        cell.last += [d.last for d in diffs]
                        cell.wrong += wrong + unequal
                        print(f"  run {repeat + 1}: {name}, {fmt}: {spent * 1e3:.1f} ms CPU/stream", flush=True)
            _report_streams(cells, rows, turns)
            for count in (int(n) for n in args.concurrency.split(",")):
                print(f"\n{count} concurrent streams, one worker, {args.deadline:.0f} s deadline:")
                for name, _ in rows[:1] + rows[2:]:
                    for fmt in PATHS:
                        crowd = measure_crowd(proxies[name], fmt, count, args.deadline, good)
                        _report_crowd(name, fmt, crowd)
            print("\nwhat each client is handed (the official SDKs' accumulators):")
            for model in ("bench", *CASES):
                shown = model if model == "bench" else CASES[model]
                for name, _ in rows:
                    for fmt in PATHS:
                        since = len(server.requests)
                        answer = handed(proxies[name], fmt, model)
                        asked = upstream_requests(server, since, model) if model in CASES else 1
                        again = f" [upstream asked {asked} times]" if asked != 1 else ""
                        print(f"  {shown}, {name}, {fmt}: {answer}{again}")
    finally:
        server.close()


def _report_streams(cells: dict[tuple[str, str], Cell], rows: list[tuple[str, Maker]], turns: list[Turn]) -> None:
    events = statistics.mean(len(turn.events) for turn in turns)
    print(f"\n{'proxy':<24} {'client':<17} {'CPU/stream':>11} {'CPU/event':>10} {'+first call':>12} {'+last byte':>11}"
          f" {'wrong':>6}")  # fmt: skip
    for name, _ in rows:
        for fmt in PATHS:
            cell = cells[name, fmt]
            cpu = statistics.median(cell.cpu)
            first, last = statistics.median(cell.first), statistics.median(cell.last)
            print(
                f"{name:<24} {fmt:<17} {cpu * 1e3:>9.2f}ms {cpu / events * 1e6:>8.1f}us "
                f"{first * 1e3:>10.2f}ms {last * 1e3:>9.2f}ms {cell.wrong:>6}"
            )
    if len(rows) > 2:
        for fmt in PATHS:
            ratio = statistics.median(cells[rows[0][0], fmt].cpu) / statistics.median(cells[rows[2][0], fmt].cpu)
            print(f"streamkit serve / litellm proxy, CPU per stream, {fmt}: {ratio:.3f}")


def _report_crowd(name: str, fmt: str, crowd: Crowd) -> None:
    errors = ", ".join(f"{kind} {count}" for kind, count in crowd.errors.items()) or "0"
    print(
        f"  {name:<22} {fmt:<17} completed {crowd.ok}/{crowd.streams}, wrong calls {crowd.wrong}, "
        f"errors {errors}, unfinished {crowd.unfinished}; wall {crowd.wall:.1f}s, "
        f"last byte p50 {crowd.p50:.2f}s p99 {crowd.p99:.2f}s; proxy CPU {crowd.cpu:.1f}s "
        f"({crowd.cpu / max(crowd.ok, 1) * 1e3:.0f} ms per completed stream)",
        flush=True,
    )


if __name__ == "__main__":
    main()
