"""``python -m benchmarks.serve``: streamkit serve against LiteLLM's proxy on the same upstream streams.

The upstream is the repository's loopback server (``tests/server.py``) in this process, answering
every request with one generated OpenAI Chat stream (``benchmarks.inputs``: two calls, 4 KiB of
arguments each, in 16-character fragments, written eight events per write). Each proxy runs as
its own process tree, started by its own command (``streamkit serve --upstream ...``,
``litellm --config ...``); what it costs is the CPU time of that tree (user and system, read
from /proc before and after), so the client's and the upstream's own work is not counted.

- CPU per stream and per event: ``--streams`` streams read one after another, through each
  proxy in turn, ``--repeat`` times; the median run.
- Added latency: the time from sending the request to the first completed call (as streamkit,
  in the client, decodes it from the bytes received) and to the last byte, through each proxy,
  minus the same over a direct connection to the upstream, measured interleaved; medians. The
  direct client ends a call when the next one opens, as the openai SDKs' stream helpers do.
- The floor: ``relay``, a bare ASGI app under the same uvicorn that sends each chunk it reads
  from the upstream on as it came, measured the same way: what the extra hop itself costs on
  this machine (two more sockets, one more process to wake), which no proxy can go under.
- Concurrency: ``--concurrent`` streams at once, each proxy with ``--workers`` workers: wall time,
  CPU time and failures.

LiteLLM's proxy is run from ``--litellm`` (a ``litellm`` command, in its own virtualenv since its
``proxy`` extra does not install from the index: see benchmarks/RESULTS.md); without it, the
streamkit figures are printed alone.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from streamkit import Assembler, Limits, ToolCall
from streamkit.serve._app import CONFIG_VARIABLE
from streamkit.serve._config import load_config
from streamkit.serve._fragments import ServeSession
from tests.server import LoopbackServer, Reply

from .inputs import Case, make_case

TICKS = os.sysconf("SC_CLK_TCK")
Result = tuple[float, float, int]
REQUEST = {"model": "bench", "messages": [{"role": "user", "content": "go"}], "stream": True}
#: Both proxies check a key, as in production: LiteLLM's master key, streamkit's proxy key.
KEY = "sk-bench-0123456789abcdef0123456789abcdef"


@dataclass
class Proxy:
    name: str
    url: str
    process: subprocess.Popen[bytes]

    def cpu(self) -> float:
        """CPU seconds (user + system) of the proxy's process tree so far."""
        return sum(_cpu(pid) for pid in _tree(self.process.pid))


def _cpu(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def _tree(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                parent = int((entry / "stat").read_text().rpartition(")")[2].split()[1])
                children.setdefault(parent, []).append(int(entry.name))
    found, stack = [], [root]
    while stack:
        pid = stack.pop()
        found.append(pid)
        stack += children.get(pid, [])
    return found


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait(url: str, process: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode}")
        with contextlib.suppress(httpx.TransportError):
            if httpx.get(url, timeout=2).status_code < 500:
                return
        time.sleep(0.2)
    raise RuntimeError(f"{what} did not start")


@contextlib.contextmanager
def streamkit_proxy(upstream: str, workers: int, flags: list[str]) -> Iterator[Proxy]:
    """``streamkit serve``; with ``--plain``, under uvicorn's pure-Python server and loop (h11, asyncio)."""
    port = _free_port()
    drip = upstream.replace("/v1", "/drip/v1")
    config = Path(tempfile.mkdtemp()) / "serve.toml"
    early = "early_close = true\n" if "--early-close" in flags else ""
    early += 'emit = "fragments"\n' if "--fragments" in flags else ""
    config.write_text(
        f'[[route]]\nformat = "openai_chat"\nupstream = "{drip}"\nmodels = ["drip"]\n{early}'
        f'[[route]]\nformat = "openai_chat"\nupstream = "{upstream}"\n{early}'
    )
    environment = {"STREAMKIT_BENCH_KEY": KEY}
    if "--plain" in flags:  # the worker's own command, as ``streamkit serve`` runs it, with the server chosen
        settings = load_config(str(config)).to_dict()
        settings["server"]["proxy_key_env"] = "STREAMKIT_BENCH_KEY"
        environment[CONFIG_VARIABLE] = json.dumps(settings)
        command = [sys.executable, "-m", "uvicorn", "--factory", "streamkit.serve._app:factory", "--loop", "asyncio"]
        command += ["--http", "h11", "--port", str(port), "--workers", str(workers), "--no-access-log"]
    else:
        command = [sys.executable, "-m", "streamkit", "serve", "--config", str(config)]
        command += ["--port", str(port), "--workers", str(workers), "--proxy-key-env", "STREAMKIT_BENCH_KEY"]
    with _running(command, f"http://127.0.0.1:{port}", "/healthz", "streamkit serve", environment) as proxy:
        yield proxy


@contextlib.contextmanager
def relay_proxy(upstream: str, workers: int) -> Iterator[Proxy]:
    """The floor: ``relay`` under the same uvicorn, each upstream chunk sent on as it came."""
    port = _free_port()
    command = [sys.executable, "-m", "uvicorn", "benchmarks.serve:relay", "--port", str(port)]
    command += ["--workers", str(workers), "--no-access-log", "--log-level", "warning"]
    with _running(command, f"http://127.0.0.1:{port}", "/healthz", "relay", {RELAY_VARIABLE: upstream}) as proxy:
        yield proxy


RELAY_VARIABLE = "STREAMKIT_BENCH_RELAY"
_relay_client: httpx.AsyncClient | None = None


async def relay(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """A bare ASGI relay, no checks and no decoding: what any proxy on this server and client pays
    for the extra hop (an httpx read from the upstream, an ASGI write to the client)."""
    global _relay_client
    if scope["type"] != "http":
        return
    if scope["path"] == "/healthz":
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})
        return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    base = os.environ[RELAY_VARIABLE]
    if json.loads(body).get("model") == "drip":
        base = base.replace("/v1", "/drip/v1")
    if _relay_client is None:
        _relay_client = httpx.AsyncClient(timeout=60)
    async with _relay_client.stream("POST", base + "/chat/completions", content=body) as response:
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": response.status_code, "headers": headers})
        async for chunk in response.aiter_raw():
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
    await send({"type": "http.response.body", "body": b""})


@contextlib.contextmanager
def litellm_proxy(litellm: str, upstream: str, workers: int) -> Iterator[Proxy]:
    port = _free_port()
    drip = upstream.replace("/v1", "/drip/v1")
    with tempfile.TemporaryDirectory() as folder:
        config = Path(folder) / "config.yaml"
        config.write_text(
            "model_list:\n  - model_name: bench\n    litellm_params:\n"
            f"      model: openai/bench\n      api_base: {upstream}\n      api_key: sk-bench\n"
            "  - model_name: drip\n    litellm_params:\n"
            f"      model: openai/drip\n      api_base: {drip}\n      api_key: sk-bench\n"
        )
        command = [litellm, "--config", str(config), "--port", str(port), "--num_workers", str(workers)]
        environment = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_LOG": "ERROR", "LITELLM_MASTER_KEY": KEY}
        with _running(command, f"http://127.0.0.1:{port}", "/health/liveliness", "litellm", environment) as proxy:
            yield proxy


@contextlib.contextmanager
def _running(command: list[str], url: str, health: str, name: str, environment: dict[str, str]) -> Iterator[Proxy]:
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, **environment}
    )
    try:
        _wait(url + health, process, name)
        yield Proxy(name, url, process)
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


async def one_stream(
    client: httpx.AsyncClient, url: str, early: bool, model: str = "bench"
) -> tuple[float, float, int]:
    """Seconds to the first completed call and to the last byte; the calls decoded.

    A client reading fragments (``early``: directly, or through LiteLLM) knows a call is
    complete when the next one opens (``early_close``), the soonest it can; through streamkit
    serve (not ``early``) a call is complete as it arrives, since each is written once, whole.
    """
    started = time.perf_counter()
    first = 0.0
    calls = 0
    assembler = Assembler("openai_chat", early_close=True)
    body = {**REQUEST, "model": model}
    async with client.stream("POST", url, json=body, headers={"authorization": f"Bearer {KEY}"}) as response:
        response.raise_for_status()
        async for chunk in response.aiter_raw():
            done = sum(isinstance(item, ToolCall) for item in assembler.feed(chunk))
            if not first and (done if early else b'"tool_calls"' in chunk):
                first = time.perf_counter() - started
            calls += done
    last = time.perf_counter() - started
    calls += sum(isinstance(item, ToolCall) for item in assembler.flush())
    return first, last, calls


async def sequential(url: str, streams: int, early: bool, model: str = "bench") -> list[tuple[float, float, int]]:
    async with httpx.AsyncClient(timeout=60) as client:
        return [await one_stream(client, url, early, model) for _ in range(streams)]


async def paired(url: str, direct: str, streams: int, early: bool) -> tuple[list[Result], list[Result]]:
    """Dripping streams through the proxy and directly, one of each in turn, so that both see the same load."""
    through, plain = [], []
    async with httpx.AsyncClient(timeout=60) as client:
        for _ in range(streams):
            through.append(await one_stream(client, url, early, "drip"))
            plain.append(await one_stream(client, direct, True, "drip"))  # a client reading fragments, directly
    return through, plain


async def concurrent(url: str, streams: int) -> tuple[float, int]:
    limits = httpx.Limits(max_connections=streams, max_keepalive_connections=streams)
    async with httpx.AsyncClient(timeout=300, limits=limits) as client:
        started = time.perf_counter()
        results = await asyncio.gather(
            *(one_stream(client, url, False) for _ in range(streams)), return_exceptions=True
        )
        wall = time.perf_counter() - started
    failed = sum(1 for r in results if isinstance(r, BaseException) or r[2] != 2)
    return wall, failed


Maker = Callable[[int], contextlib.AbstractContextManager[Proxy]]


@dataclass
class Row:
    name: str
    make: Maker
    early: bool  # whether the client reads fragments (see ``one_stream``)
    cpu: list[float] = field(default_factory=list)
    first: list[float] = field(default_factory=list)
    last: list[float] = field(default_factory=list)


def _measure(row: Row, base: str, streams: int, drip: float) -> None:
    """CPU per stream from streams written at full speed; added latency from streams that drip.

    Each proxy has two routes (the ``/v1`` and the ``/drip/v1`` upstream, by model name), and
    each dripping stream through it is paired with one read directly from the upstream.
    """
    with row.make(1) as proxy:
        url = proxy.url + "/v1/chat/completions"
        asyncio.run(sequential(url, 5, row.early, "bench"))  # warm: imports, pools, caches
        before = proxy.cpu()
        through = asyncio.run(sequential(url, streams, row.early, "bench"))
        row.cpu.append((proxy.cpu() - before) / streams)
        direct = base.replace("/v1", "/drip/v1") + "/chat/completions"
        dripped, plain = asyncio.run(paired(url, direct, streams, row.early))
    if not all(result[2] == 2 for result in through + dripped):
        raise RuntimeError(f"{row.name} lost calls")
    through = dripped
    row.first += [ours[0] - theirs[0] for ours, theirs in zip(through, plain, strict=True)]
    row.last += [ours[1] - theirs[1] for ours, theirs in zip(through, plain, strict=True)]


def _upstream(case: Case, drip: float) -> LoopbackServer:
    """The upstream: ``/v1`` writes the stream as fast as it can, ``/drip/v1`` sleeps ``drip`` s before each write."""
    server = LoopbackServer()
    events = [event + b"\n\n" for event in case.data.split(b"\n\n") if event.strip()]
    writes = [b"".join(events[i : i + 8]) for i in range(0, len(events), 8)]
    server.routes["/v1/chat/completions"] = Reply(writes=writes)
    server.routes["/drip/v1/chat/completions"] = Reply(writes=writes, delay=drip)
    return server


def reemission(writes: list[bytes], fragments: bool, runs: int = 50) -> tuple[float, float]:
    """Seconds the proxy's own re-emission (``Session.feed``, in this process) spends on the write
    that completes the first call, and on the average write: medians of ``runs`` streams."""
    completing, average = [], []
    for _ in range(runs):
        session = ServeSession(
            "openai_chat", "/chat/completions", None, Limits(), keep=False, fragments=fragments, withhold=True,
            opened=True, early_close=True,
        )  # fmt: skip
        spent = []
        first = None
        for write in writes:
            started = time.perf_counter()
            session.feed(write)
            spent.append(time.perf_counter() - started)
            if first is None and session.calls:
                first = spent[-1]
            session.calls.clear()
            session.started.clear()
        assert first is not None
        completing.append(first)
        average.append(sum(spent) / len(spent))
    return statistics.median(completing), statistics.median(average)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--litellm", default=None, help="the litellm command (its proxy), to run side by side")
    parser.add_argument("--streams", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--concurrent", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--drip", type=float, default=0.002, help="seconds before each upstream write (latency runs)")
    parser.add_argument("--litellm-concurrent", type=int, default=None, help="concurrent streams for LiteLLM's proxy")
    args = parser.parse_args()
    case = make_case("openai_chat", 4096, 16, 2)
    upstream = _upstream(case, args.drip)
    base = upstream.url("/v1")
    writes = len(upstream.routes["/v1/chat/completions"].writes)
    print(f"upstream stream: {len(case.data)} bytes, {case.events} events in {writes} writes, {case.calls} calls")
    rows = [
        Row("streamkit serve", lambda w: streamkit_proxy(base, w, []), early=False),
        Row("streamkit --early-close", lambda w: streamkit_proxy(base, w, ["--early-close"]), early=False),
        Row("  same, h11 + asyncio", lambda w: streamkit_proxy(base, w, ["--early-close", "--plain"]), early=False),
        Row("  same, fragments", lambda w: streamkit_proxy(base, w, ["--early-close", "--fragments"]), early=True),
        Row("relay (the floor)", lambda w: relay_proxy(base, w), early=True),
    ]
    if args.litellm:
        rows.append(Row("litellm proxy", lambda w: litellm_proxy(args.litellm, base, w), early=True))
    try:
        for _ in range(args.repeat):
            for row in rows:
                _measure(row, base, args.streams, args.drip)
        floor = next(row for row in rows if row.name.startswith("relay"))
        over = statistics.median(floor.first), statistics.median(floor.last)
        print(f"\n{'proxy':<24} {'CPU/stream':>11} {'CPU/event':>10} {'+first call':>12} {'+last byte':>11}", end="")
        print(f" {'over the floor: first':>22} {'last':>9}")
        for row in rows:
            per_stream = statistics.median(row.cpu)
            first, last = statistics.median(row.first), statistics.median(row.last)
            print(
                f"{row.name:<24} {per_stream * 1e3:>9.2f}ms {per_stream / case.events * 1e6:>8.1f}us "
                f"{first * 1e3:>10.3f}ms {last * 1e3:>9.3f}ms {(first - over[0]) * 1e3:>20.3f}ms "
                f"{(last - over[1]) * 1e3:>7.3f}ms"
            )
        for fragments in (False, True):
            first, each = reemission(upstream.routes["/v1/chat/completions"].writes, fragments)
            print(
                f"re-emission in process ({'fragments' if fragments else 'whole'}, early close): "
                f"the write completing the first call {first * 1e6:.0f}us, a write on average {each * 1e6:.0f}us"
            )
        if args.litellm:
            ratio = statistics.median(rows[0].cpu) / statistics.median(rows[-1].cpu)
            print(f"\nstreamkit serve / litellm proxy, CPU per stream: {ratio:.3f}")
        print(f"\n{args.concurrent} concurrent streams, {args.workers} workers:")
        for row in (rows[0], rows[-1]) if args.litellm else rows[:1]:
            count = (
                args.litellm_concurrent
                if row.name.startswith("litellm") and args.litellm_concurrent
                else args.concurrent
            )
            with row.make(args.workers) as proxy:
                url = proxy.url + "/v1/chat/completions"
                asyncio.run(sequential(url, 5, False))
                before = proxy.cpu()
                wall, failed = asyncio.run(concurrent(url, count))
                spent = proxy.cpu() - before
                print(
                    f"{row.name:<24} {count} streams: wall {wall:6.2f}s  CPU {spent:6.2f}s "
                    f"({spent / count * 1e3:.2f}ms/stream)  failed {failed}"
                )
    finally:
        upstream.close()


if __name__ == "__main__":
    main()
