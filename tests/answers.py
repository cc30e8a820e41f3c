"""A model's answer when a transport asks it again about a bad call: some text, the calls whole,
the end, in each re-emitted format's own events, as the loopback server writes them."""

from __future__ import annotations

from typing import Any

import orjson

from .models import GEMINI, OPENAI
from .server import Reply, split_awkwardly

#: One call of an answer: its id, name and arguments.
Answered = tuple[str, str, dict[str, Any]]


def sse(*events: tuple[str | None, Any]) -> Reply:
    """SSE events, each ``(name, data)``, cut inside every multi-byte character and every CRLF."""
    out = b""
    for name, data in events:
        head = b"" if name is None else f"event: {name}\n".encode()
        body = data if isinstance(data, bytes) else orjson.dumps(data)
        out += head + b"data: " + body + b"\n\n"
    return Reply(split_awkwardly(out))


def responses(text: str, calls: list[Answered], *, named: str = "resp_2", stop: str = "completed") -> Reply:
    """A Responses stream: its start, a message, one ``function_call`` item per call, and
    ``response.<stop>`` whose output holds them all."""
    response = {"id": named, "object": "response", "status": "in_progress", "model": OPENAI, "output": []}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": response},
        {"type": "response.in_progress", "response": response},
    ]
    content = {"type": "output_text", "text": text, "annotations": []}
    message = {
        "id": f"msg_{named}",
        "type": "message",
        "status": "completed",
        "role": "assistant",
        "content": [content],
    }
    where = {"item_id": message["id"], "output_index": 0, "content_index": 0}
    events += [
        {"type": "response.output_item.added", "output_index": 0, "item": {**message, "content": []}},
        {"type": "response.content_part.added", **where, "part": {**content, "text": ""}},
        {"type": "response.output_text.delta", **where, "delta": text, "logprobs": []},
        {"type": "response.output_text.done", **where, "text": text, "logprobs": []},
        {"type": "response.content_part.done", **where, "part": content},
        {"type": "response.output_item.done", "output_index": 0, "item": message},
    ]
    output: list[Any] = [message]
    for index, (call_id, name, arguments) in enumerate(calls, 1):
        text_of = orjson.dumps(arguments).decode()
        item = {"id": f"fc_{call_id}", "type": "function_call", "call_id": call_id, "name": name, "arguments": ""}
        done = {**item, "arguments": text_of, "status": "completed"}
        at = {"item_id": item["id"], "output_index": index}
        events += [
            {"type": "response.output_item.added", "output_index": index, "item": {**item, "status": "in_progress"}},
            {"type": "response.function_call_arguments.delta", **at, "delta": text_of},
            {"type": "response.function_call_arguments.done", **at, "name": name, "arguments": text_of},
            {"type": "response.output_item.done", "output_index": index, "item": done},
        ]
        output.append(done)
    usage = {"input_tokens": 9, "output_tokens": 5, "total_tokens": 14}
    final = {**response, "status": stop, "output": output, "usage": usage}
    events.append({"type": f"response.{stop}", "response": final})
    return sse(*((event["type"], {**event, "sequence_number": n}) for n, event in enumerate(events)))


def gemini(text: str, calls: list[Answered], *, stop: str = "STOP") -> Reply:
    """A Gemini stream: a chunk of text, then one with the calls and the finish reason."""

    def chunk(parts: list[Any], **end: Any) -> tuple[None, Any]:
        candidate = {"content": {"role": "model", "parts": parts}, "index": 0, **end}
        return None, {"candidates": [candidate], "modelVersion": GEMINI, "responseId": "r2"}

    parts = [{"functionCall": {"id": call_id, "name": name, "args": args}} for call_id, name, args in calls]
    _, last = chunk(parts, finishReason=stop)
    last["usageMetadata"] = {"promptTokenCount": 9, "candidatesTokenCount": 5, "totalTokenCount": 14}
    return sse(chunk([{"text": text}]), (None, last))


def cohere(text: str, calls: list[Answered], *, stop: str = "TOOL_CALL") -> Reply:
    """A Cohere v2 stream: its start, a text block, each call, ``message-end``."""
    start = {"role": "assistant", "content": [], "tool_plan": "", "tool_calls": [], "citations": []}
    events: list[dict[str, Any]] = [
        {"type": "message-start", "id": "c2", "delta": {"message": start}},
        {"type": "content-start", "index": 0, "delta": {"message": {"content": {"type": "text", "text": ""}}}},
        {"type": "content-delta", "index": 0, "delta": {"message": {"content": {"text": text}}}},
        {"type": "content-end", "index": 0},
    ]
    for index, (call_id, name, args) in enumerate(calls):
        entry = {"id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
        fragment = {"function": {"arguments": orjson.dumps(args).decode()}}
        events += [
            {"type": "tool-call-start", "index": index, "delta": {"message": {"tool_calls": entry}}},
            {"type": "tool-call-delta", "index": index, "delta": {"message": {"tool_calls": fragment}}},
            {"type": "tool-call-end", "index": index},
        ]
    usage = {"tokens": {"input_tokens": 9, "output_tokens": 5}}
    events.append({"type": "message-end", "delta": {"finish_reason": stop, "usage": usage}})
    return sse(*((event["type"], event) for event in events))


def ollama(text: str, calls: list[Answered], *, stop: str = "stop") -> Reply:
    """An Ollama ``/api/chat`` stream: a line of text, one with the calls, the line done."""
    head = {"model": "qwen3", "created_at": "2026-01-01T00:00:02Z"}
    entries = [
        {"id": call_id, "function": {"index": 0, "name": name, "arguments": args}} for call_id, name, args in calls
    ]
    lines = [
        {**head, "message": {"role": "assistant", "content": text}, "done": False},
        {**head, "message": {"role": "assistant", "content": "", "tool_calls": entries}, "done": False},
        {**head, "message": {"role": "assistant", "content": ""}, "done": True, "done_reason": stop, "eval_count": 5},
    ]
    body = b"".join(orjson.dumps(line) + b"\n" for line in lines)
    return Reply(split_awkwardly(body), content_type="application/x-ndjson")


def chat(text: str, calls: list[Answered], *, stop: str = "tool_calls") -> Reply:
    """An OpenAI Chat stream: a chunk of text, one per call, the finish reason, ``[DONE]``."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> tuple[None, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return None, {
            "id": "chatcmpl-2",
            "object": "chat.completion.chunk",
            "created": 2,
            "model": OPENAI,
            "choices": [choice],
        }

    events = [chunk({"role": "assistant", "content": text})]
    for index, (call_id, name, args) in enumerate(calls):
        function = {"name": name, "arguments": orjson.dumps(args).decode()}
        events.append(
            chunk({"tool_calls": [{"index": index, "id": call_id, "type": "function", "function": function}]})
        )
    return sse(*events, chunk({}, stop), (None, b"[DONE]"))


def messages(text: str, calls: list[Answered], *, stop: str = "tool_use") -> Reply:
    """An Anthropic Messages stream: its start, a text block, a block per call, its end."""
    message = {"id": "msg_2", "type": "message", "role": "assistant", "model": "claude", "content": []}
    usage = {"input_tokens": 9, "output_tokens": 1}
    events: list[tuple[str, Any]] = [
        ("message_start", {"type": "message_start", "message": {**message, "stop_reason": None, "usage": usage}}),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        ),
        (
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
    ]
    for index, (call_id, name, args) in enumerate(calls, 1):
        block = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": orjson.dumps(args).decode()}
        events += [
            ("content_block_start", {"type": "content_block_start", "index": index, "content_block": block}),
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": index}),
        ]
    events += [
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 12}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    return sse(*events)
