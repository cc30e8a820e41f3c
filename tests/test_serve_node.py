"""``streamkit serve`` read by the official Node SDKs, ``openai`` and ``@anthropic-ai/sdk``.

CI installs them from tests/node/package.json into a directory outside the package and names
it in ``STREAMKIT_NODE_MODULES``; without node or those modules the tests skip, saying which.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("uvicorn")

from .server import LoopbackServer
from .serving import PROXY_KEY, TOOLS, Proxy, keyed_proxy, reply, route

SCRIPT = Path(__file__).resolve().parent / "node" / "read_stream.cjs"
NODE = shutil.which("node")
MODULES = os.environ.get("STREAMKIT_NODE_MODULES", str(Path(__file__).resolve().parent / "node" / "node_modules"))

if NODE is None:
    pytest.skip("node is not installed", allow_module_level=True)
if not all((Path(MODULES) / name / "package.json").exists() for name in ("openai", "@anthropic-ai/sdk")):
    pytest.skip(
        f"the Node SDKs are not installed in {MODULES} (npm install --prefix DIR tests/node)", allow_module_level=True
    )


@pytest.fixture(scope="module")
def served(upstream: LoopbackServer) -> Iterator[Proxy]:
    with keyed_proxy(upstream, route(upstream), route(upstream, "anthropic")) as running:
        yield running


def read(served: Proxy, fmt: str, key: str = PROXY_KEY, tools: list[dict[str, Any]] | None = None) -> Any:
    assert NODE is not None
    out = subprocess.run(
        [NODE, str(SCRIPT), fmt, served.url, key, *([json.dumps(tools)] if tools else [])],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "NODE_PATH": MODULES},
        check=True,
    )
    return json.loads(out.stdout)


def test_node_openai_reads_parallel_calls_at_their_own_indexes(served: Proxy, upstream: LoopbackServer) -> None:
    upstream.routes["/v1/chat/completions"] = reply("openai_chat", "parallel_index_zero")
    assert read(served, "openai_chat") == {
        "calls": {
            "0": {"id": "call_w", "name": "get_weather", "arguments": '{"city":"Paris"}'},
            "1": {"id": "call_s", "name": "get_stock", "arguments": '{"ticker":"AAPL"}'},
        }
    }


def test_node_openai_raises_on_a_withheld_call(served: Proxy, upstream: LoopbackServer) -> None:
    upstream.routes["/v1/chat/completions"] = reply("openai_chat", "invalid_json")
    assert read(served, "openai_chat") == {
        "error": "APIError",
        "status": None,
        "message": "streamkit withheld an invalid tool call: at index 0 (get_weather, id call_w): invalid_json: "
        "the arguments are not valid JSON: trailing comma is not allowed",
    }


def test_node_anthropic_parses_whole_calls(served: Proxy, upstream: LoopbackServer) -> None:
    upstream.routes["/v1/messages"] = reply("anthropic", "two_calls")
    assert read(served, "anthropic") == {
        "calls": [["toolu_w", "get_weather", {"city": "Paris"}], ["toolu_s", "get_stock", {"ticker": "AAPL"}]]
    }


def test_node_anthropic_raises_on_a_cut_call(served: Proxy, upstream: LoopbackServer) -> None:
    upstream.routes["/v1/messages"] = reply("anthropic", "cut_call")
    result = read(served, "anthropic")
    assert result["error"] == "APIError"
    assert (
        "streamkit withheld an invalid tool call: at index 0 (get_weather, id toolu_w): truncated" in result["message"]
    )


def test_node_openai_with_a_wrong_proxy_key_gets_401(served: Proxy) -> None:
    result = read(served, "openai_chat", key="sk-wrong")
    assert (result["error"], result["status"]) == ("AuthenticationError", 401)


@pytest.fixture(scope="module")
def fragmented(upstream: LoopbackServer) -> Iterator[Proxy]:
    routes = [route(upstream, emit="fragments"), route(upstream, "anthropic", emit="fragments")]
    with keyed_proxy(upstream, *routes) as running:
        yield running


def test_node_openai_accumulates_streamed_fragments_into_the_calls(fragmented: Proxy, upstream: LoopbackServer) -> None:
    upstream.routes["/v1/chat/completions"] = reply("openai_chat", "parallel_index_zero")
    done = [[0, "get_weather", '{"city": "Paris"}'], [1, "get_stock", '{"ticker": "AAPL"}']]
    calls = [["call_w", "get_weather", '{"city": "Paris"}'], ["call_s", "get_stock", '{"ticker": "AAPL"}']]
    assert read(fragmented, "openai_chat_accumulated", tools=TOOLS) == {"done": done, "calls": calls}


@pytest.mark.parametrize("case", ["cut_call", "invalid_json", "schema_error"])
def test_node_accumulators_never_complete_a_withheld_streamed_call(
    fragmented: Proxy, upstream: LoopbackServer, case: str
) -> None:
    upstream.routes["/v1/chat/completions"] = reply("openai_chat", case)
    upstream.routes["/v1/messages"] = reply("anthropic", case)
    chat = read(fragmented, "openai_chat_accumulated", tools=TOOLS)
    assert (chat["done"], chat["error"]) == ([], "APIError")
    assert chat["message"].startswith("streamkit withheld an invalid tool call")
    messages = read(fragmented, "anthropic", tools=TOOLS)
    assert "calls" not in messages  # finalMessage() threw: no tool_use block was completed
