"""Shared test helpers: fixture discovery, in-process replay, chunking."""

from __future__ import annotations

import io
import itertools
import logging
import sys
from collections.abc import Awaitable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import anyio
import pytest

from streamkit import Provider
from streamkit._cli import main
from streamkit._types import PROVIDERS

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
REAL_STREAMS = ROOT.parent / "shared" / "real-streams"
WIRE_SUFFIXES = (".sse", ".ndjson", ".bin")
#: The longest a test waits for anything to happen (a tool to start, a run to be cancelled).
WAIT_SECONDS = 30.0


class Waitable(Protocol):
    def wait(self) -> Awaitable[object]: ...


async def waited(event: Waitable, what: str, seconds: float = WAIT_SECONDS) -> None:
    """Wait for ``event``, never for ever: a test that would hang fails, naming what it waited for.

    asyncio's and anyio's events alike, under asyncio or trio. A wait meant to last until the
    task is cancelled is one of these too: if the cancellation never comes, the test says so.
    """
    try:
        with anyio.fail_after(seconds):
            await event.wait()
    except TimeoutError:
        raise AssertionError(f"waited {seconds:g} s for {what}") from None


def slug(name: str) -> Provider:
    """``name`` as a provider slug, for the type checker; a name that is none fails the test."""
    assert name in PROVIDERS, name
    return name


@dataclass(frozen=True)
class Fixture:
    provider: Provider
    path: Path

    @property
    def case(self) -> str:
        return f"{self.provider}/{self.path.stem}"

    @property
    def expected_stdout(self) -> str:
        return self.path.with_name(self.path.stem + ".expected.jsonl").read_text(encoding="utf-8")

    @property
    def expected_stderr(self) -> str | None:
        err = self.path.with_name(self.path.stem + ".stderr")
        return err.read_text(encoding="utf-8").strip() if err.exists() else None


def fixtures(provider: str | None = None) -> list[Fixture]:
    return [
        Fixture(slug(path.parent.name), path)
        for path in sorted(FIXTURES.glob("*/*"))
        if path.suffix in WIRE_SUFFIXES and (provider is None or path.parent.name == provider)
    ]


@dataclass(frozen=True)
class Replay:
    code: int
    stdout: str
    stderr: str


def replay(args: Sequence[str], stdin: bytes = b"") -> Replay:
    """Run ``streamkit`` in-process, as the command line would."""
    out, err = io.BytesIO(), io.StringIO()
    fake_stdout = io.TextIOWrapper(out, encoding="utf-8")
    old = sys.stdout, sys.stderr, sys.stdin
    sys.stdout, sys.stderr = fake_stdout, err
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    try:
        try:
            code = main(list(args))
        except SystemExit as exc:
            code = int(exc.code or 0)
        fake_stdout.flush()
    finally:
        sys.stdout, sys.stderr, sys.stdin = old
    return Replay(code, out.getvalue().decode("utf-8"), err.getvalue())


def split_at(data: bytes, cuts: Sequence[int]) -> list[bytes]:
    """Split ``data`` at the given offsets (any order, duplicates allowed)."""
    points = sorted({c for c in cuts if 0 < c < len(data)})
    bounds = [0, *points, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds)]


def one_byte(data: bytes) -> Iterator[bytes]:
    for i in range(len(data)):
        yield data[i : i + 1]


def sse(*payloads: object, done: bool = False, named: bool = False) -> bytes:
    """Build SSE bytes from payloads (dicts are JSON-encoded; an Anthropic-style ``type`` names
    the event when ``named``)."""
    import json

    out = []
    for payload in payloads:
        data = payload if isinstance(payload, str) else json.dumps(payload)
        name = payload.get("type") if named and isinstance(payload, dict) else None
        out.append((f"event: {name}\n" if name else "") + f"data: {data}\n\n")
    if done:
        out.append("data: [DONE]\n\n")
    return "".join(out).encode()


def events(data: bytes, provider: str, **options: object) -> list[object]:
    from streamkit import iter_events

    return list(iter_events([data], slug(provider), **options))  # type: ignore[arg-type]  # options as given


def plain_logger(name: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """Logger ``name`` at every level, its records as its library writes them, whatever another
    library in the process did to it (importing LiteLLM sets httpx's logger to WARNING and adds a
    filter that rewrites its records)."""
    monkeypatch.setattr(logging.getLogger(name), "filters", [])
    caplog.set_level(logging.DEBUG, logger=name)


class Clock:
    """``time.time_ns`` as a test sets it (the ``clock`` fixture puts it in place), counting reads."""

    def __init__(self) -> None:
        self.now = 0
        self.reads = 0

    def __call__(self) -> int:
        self.reads += 1
        return self.now
