"""A small AWS event-stream encoder, for tests and for writing the Bedrock fixtures.

It follows the layout botocore's ``EventStreamBuffer`` decodes (and the tests check that it
does): prelude (total length, headers length, CRC32 of those 8 bytes), headers, payload, CRC32
of all that. ``python -m tests.eventstream_encode`` rewrites ``fixtures/bedrock/*.bin``; their
event bodies follow the shapes of AWS's ConverseStream reference and of recorded Bedrock streams
(ids and padding invented).
"""

from __future__ import annotations

import base64
import json
import struct
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# A header: (name, value type 0-9, value). Values: bool for 0/1, int for 2-5 and 8, bytes for
# 6 and 9, str for 7.
Header = tuple[str, int, Any]

_INTEGER_FORMATS = {2: "!b", 3: "!h", 4: "!i", 5: "!q", 8: "!q"}


def encode_header(name: str, kind: int, value: Any) -> bytes:
    raw_name = name.encode()
    out = struct.pack("!B", len(raw_name)) + raw_name + struct.pack("!B", kind)
    if kind in (0, 1):
        return out
    if kind in _INTEGER_FORMATS:
        return out + struct.pack(_INTEGER_FORMATS[kind], value)
    if kind in (6, 7):
        raw = value.encode() if kind == 7 else bytes(value)
        return out + struct.pack("!H", len(raw)) + raw
    if kind == 9:
        assert len(value) == 16
        return out + bytes(value)
    raise ValueError(f"unknown header value type {kind}")


def encode_message(headers: Sequence[Header], payload: bytes) -> bytes:
    raw_headers = b"".join(encode_header(*header) for header in headers)
    total = 12 + len(raw_headers) + len(payload) + 4
    prelude = struct.pack("!II", total, len(raw_headers))
    prelude += struct.pack("!I", zlib.crc32(prelude))
    body = prelude + raw_headers + payload
    return body + struct.pack("!I", zlib.crc32(body))


def _json(body: Any) -> bytes:
    return json.dumps(body, separators=(",", ":")).encode()


def event(event_type: str, body: Any) -> bytes:
    """A ``:message-type: event`` message, headers as Bedrock sends them."""
    headers = [(":event-type", 7, event_type), (":content-type", 7, "application/json"), (":message-type", 7, "event")]
    return encode_message(headers, _json(body))


def exception(exception_type: str, message: str) -> bytes:
    headers = [
        (":exception-type", 7, exception_type),
        (":content-type", 7, "application/json"),
        (":message-type", 7, "exception"),
    ]
    return encode_message(headers, _json({"message": message}))


def error(code: str, message: str) -> bytes:
    headers = [(":error-code", 7, code), (":error-message", 7, message), (":message-type", 7, "error")]
    return encode_message(headers, b"")


# -- the Bedrock fixtures ---------------------------------------------------------------------


def _pad(n: int) -> str:
    return "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"[:n]


def _start(index: int, tool_id: str, name: str, pad: int = 3, **extra: Any) -> bytes:
    tool = {"toolUseId": tool_id, "name": name, **extra}
    return event("contentBlockStart", {"contentBlockIndex": index, "start": {"toolUse": tool}, "p": _pad(pad)})


def _input(index: int, text: str, pad: int = 2) -> bytes:
    body = {"contentBlockIndex": index, "delta": {"toolUse": {"input": text}}, "p": _pad(pad)}
    return event("contentBlockDelta", body)


def _text(index: int, text: str, pad: int = 5) -> bytes:
    return event("contentBlockDelta", {"contentBlockIndex": index, "delta": {"text": text}, "p": _pad(pad)})


def _reasoning(index: int, pad: int = 4, **content: str) -> bytes:
    body = {"contentBlockIndex": index, "delta": {"reasoningContent": content}, "p": _pad(pad)}
    return event("contentBlockDelta", body)


def _stop(index: int, pad: int = 1) -> bytes:
    return event("contentBlockStop", {"contentBlockIndex": index, "p": _pad(pad)})


def _message_start() -> bytes:
    return event("messageStart", {"role": "assistant", "p": _pad(8)})


def _message_stop(reason: str) -> bytes:
    return event("messageStop", {"stopReason": reason, "p": _pad(7)})


def _metadata(inputs: int, outputs: int) -> bytes:
    usage = {"inputTokens": inputs, "outputTokens": outputs, "totalTokens": inputs + outputs}
    return event("metadata", {"usage": usage, "metrics": {"latencyMs": 412}, "p": _pad(11)})


def fixtures() -> dict[str, bytes]:
    """Each Bedrock fixture's name and bytes."""
    return {
        # Text with no contentBlockStart, then two calls; Claude's first fragment is "".
        "text_then_two_calls": b"".join(
            [
                _message_start(),
                _text(0, "Checking both."),
                _text(0, " One moment."),
                _stop(0),
                _start(1, "tooluse_wX3kQ9aRTcW1", "get_weather"),
                _input(1, ""),
                _input(1, '{"city":'),
                _input(1, ' "Paris", "unit": "celsius"}'),
                _stop(1),
                _start(2, "tooluse_Bq7m2LpZSe0v", "get_stock"),
                _input(2, '{"ticker": "AAPL"}'),
                _stop(2),
                _message_stop("tool_use"),
                _metadata(512, 96),
            ]
        ),
        # A call whose only fragment is "", and an OpenAI model's call_ id and tiny fragments.
        "no_arguments": b"".join(
            [
                _message_start(),
                _start(0, "tooluse_N0ArGs000001", "list_files"),
                _input(0, ""),
                _stop(0),
                _start(1, "call_5f1e0c2a", "get_time"),
                *[_input(1, piece) for piece in ["{", '"tz', '":', ' "UTC', '"', "}"]],
                _stop(1),
                _message_stop("tool_use"),
                _metadata(80, 20),
            ]
        ),
        # A text block opened with an empty `start: {}` (gateways), a server tool with its
        # result block (Nova's built-in tools), then one client call.
        "server_tool_and_empty_start": b"".join(
            [
                _message_start(),
                event("contentBlockStart", {"contentBlockIndex": 0, "start": {}, "p": _pad(4)}),
                _text(0, "Let me look that up."),
                _stop(0),
                _start(1, "tooluse_srv0000001", "nova_grounding", type="server_tool_use"),
                _input(1, '{"query": "weather Paris"}'),
                _stop(1),
                event(
                    "contentBlockStart",
                    {
                        "contentBlockIndex": 2,
                        "start": {"toolResult": {"toolUseId": "tooluse_srv0000001", "type": "nova_grounding"}},
                        "p": _pad(2),
                    },
                ),
                event(
                    "contentBlockDelta",
                    {"contentBlockIndex": 2, "delta": {"toolResult": [{"text": "Sunny, 21 C"}]}, "p": _pad(3)},
                ),
                _stop(2),
                _start(3, "tooluse_cl1ent00003", "save_note"),
                _input(3, '{"text": "Sunny in Paris"}'),
                _stop(3),
                _message_stop("tool_use"),
                _metadata(300, 40),
            ]
        ),
        # The output limit hit inside the second call's arguments: it never gets its stop.
        "max_tokens_truncated": b"".join(
            [
                _message_start(),
                _start(0, "tooluse_Tr0000000001", "get_weather"),
                _input(0, '{"city": "Oslo"}'),
                _stop(0),
                _start(1, "tooluse_Tr0000000002", "write_report"),
                _input(1, '{"title": "Weather", "body": "Oslo is'),
                _message_stop("max_tokens"),
                _metadata(150, 64),
            ]
        ),
        # A throttling exception after one call and inside another.
        "error_midstream": b"".join(
            [
                _message_start(),
                _start(0, "tooluse_Er0000000001", "get_weather"),
                _input(0, '{"city": "Lima"}'),
                _stop(0),
                _start(1, "tooluse_Er0000000002", "get_stock"),
                _input(1, '{"ticker": "AA'),
                exception("throttlingException", "Too many tokens, please wait before trying again."),
            ]
        ),
        # Reasoning (text, and a signature in two deltas) before the text and a call: the turn
        # state that goes back in the history.
        "reasoning_then_tool_use": b"".join(
            [
                _message_start(),
                _reasoning(0, text="The user wants "),
                _reasoning(0, text="the weather."),
                _reasoning(0, signature="ErcBCkgIBhAB"),
                _reasoning(0, signature="GAIiQDYN+P1S/w=="),
                _stop(0),
                _text(1, "Checking."),
                _stop(1),
                _start(2, "tooluse_A1", "get_weather"),
                _input(2, '{"city":'),
                _input(2, '"Paris"}'),
                _stop(2),
                _message_stop("tool_use"),
                _metadata(50, 30),
            ]
        ),
        # An OpenAI model on Bedrock: its reasoning redacted (``redactedContent``, a blob: base64
        # text in the JSON body, bytes once boto3 has parsed it), then a call in tiny fragments.
        "redacted_reasoning_then_tool_use": b"".join(
            [
                _message_start(),
                _reasoning(0, redactedContent=base64.b64encode(bytes(range(200, 256)) * 2).decode()),
                _stop(0),
                _start(1, "call_9f2c41d07be3", "get_weather"),
                *[_input(1, piece) for piece in ["", '{"', "city", '":"', "Oslo", '"}']],
                _stop(1),
                _message_stop("tool_use"),
                _metadata(120, 48),
            ]
        ),
        # A call whose input is not JSON (a trailing comma), then a valid one.
        "invalid_json_then_a_valid_call": b"".join(
            [
                _message_start(),
                _start(0, "tooluse_Bad000000001", "get_weather"),
                _input(0, '{"city": "Paris",'),
                _input(0, "}"),
                _stop(0),
                _start(1, "tooluse_Good00000002", "get_stock"),
                _input(1, '{"ticker": "AAPL"}'),
                _stop(1),
                _message_stop("tool_use"),
                _metadata(90, 30),
            ]
        ),
        # A plain answer: text only, no call.
        "text_only": b"".join(
            [
                _message_start(),
                _text(0, "It is sunny"),
                _text(0, " in Paris."),
                _stop(0),
                _message_stop("end_turn"),
                _metadata(40, 8),
            ]
        ),
        # The connection dropped in the middle of a message.
        "cut_mid_message": b"".join(
            [
                _message_start(),
                _start(0, "tooluse_Cut000000001", "get_weather"),
                _input(0, '{"city": "Rome"}'),
                _stop(0),
                _start(1, "tooluse_Cut000000002", "get_stock"),
                _input(1, '{"ticker": "IBM"}')[:40],
            ]
        ),
    }


def main() -> None:
    folder = Path(__file__).resolve().parent.parent / "fixtures" / "bedrock"
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in fixtures().items():
        (folder / f"{name}.bin").write_bytes(data)


if __name__ == "__main__":
    main()
