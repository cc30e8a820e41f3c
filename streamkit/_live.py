"""``streamkit live`` and ``streamkit record``: send a real request, print what ``replay`` prints.

``live --provider SLUG --url URL --body request.json`` posts the JSON body with the API key from
the provider's usual environment variable, in the header that provider expects, and prints one
JSON line per call and the ``end`` line, exactly as ``replay`` does for a transcript, with the
same exit statuses (an HTTP or connection failure is a failed stream: exit 1). ``record ... -o
FILE`` does the same and saves the response body's bytes, as received (after any
Content-Encoding is undone), so that ``streamkit replay FILE`` reads the same stream again.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable, Mapping
from typing import IO, Any

import httpx

from ._client import stream
from ._errors import StreamError, TransportError, UsageError
from ._types import StreamEvent
from .providers import DECODERS

__all__ = ("AUTH", "COMMANDS", "add_commands", "run")

COMMANDS = ("live", "record")
EXIT_OK, EXIT_STREAM_ERROR, EXIT_USAGE = 0, 1, 2


class Auth:
    """Where a provider's API key comes from and which header carries it."""

    def __init__(self, variables: tuple[str, ...], header: str, template: str = "{}", **extra: str) -> None:
        self.variables = variables
        self.header = header
        self.template = template
        self.extra = extra


#: The provider's usual environment variables (the first one set wins) and its auth header.
#: Ollama runs locally without a key; Bedrock needs AWS SigV4 signing, which is boto3's job.
AUTH: Mapping[str, Auth] = {
    "openai_chat": Auth(("OPENAI_API_KEY",), "Authorization", "Bearer {}"),
    "openai_responses": Auth(("OPENAI_API_KEY",), "Authorization", "Bearer {}"),
    "anthropic": Auth(("ANTHROPIC_API_KEY",), "x-api-key", **{"anthropic-version": "2023-06-01"}),
    "gemini": Auth(("GEMINI_API_KEY", "GOOGLE_API_KEY"), "x-goog-api-key"),
    "cohere": Auth(("CO_API_KEY",), "Authorization", "Bearer {}"),
    "mistral": Auth(("MISTRAL_API_KEY",), "Authorization", "Bearer {}"),
}
_UNSIGNED = frozenset({"bedrock"})

DEFAULT_TIMEOUT = 600.0  # seconds between two reads: a model may think for minutes


def add_commands(commands: Any) -> None:
    """Add ``live`` and ``record`` to the command line's subparsers."""
    providers = ", ".join(sorted(DECODERS))
    for name, text in (
        ("live", "send a request and print its calls as they complete"),
        ("record", "send a request, print its calls, and save the response as a transcript"),
    ):
        command = commands.add_parser(name, help=text)
        command.add_argument("--provider", required=True, help=f"one of: {providers}")
        command.add_argument("--url", required=True, help="the streaming endpoint")
        command.add_argument("--body", required=True, help="the request's JSON body, or - for standard input")
        command.add_argument(
            "--header", action="append", default=[], metavar="'NAME: VALUE'", help="an extra request header"
        )
        command.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds to wait for data")
        if name == "record":
            command.add_argument("-o", "--output", required=True, help="the transcript file to write")


def _headers(provider: str, extra: list[str], environ: Mapping[str, str]) -> dict[str, str]:
    if provider in _UNSIGNED:
        raise UsageError(f"{provider} requests need AWS SigV4 signing: record the stream with boto3 instead")
    headers: dict[str, str] = {}
    for number, item in enumerate(extra, 1):
        name, colon, value = item.partition(":")
        if not colon or not name.strip():
            # The value is not shown: it may be a key.
            raise UsageError(f"--header number {number} must be 'NAME: VALUE'")
        headers[name.strip()] = value.strip()
    given = {name.lower() for name in headers}
    auth = AUTH.get(provider)
    if auth is None:
        return headers
    headers.update({name: value for name, value in auth.extra.items() if name.lower() not in given})
    if auth.header.lower() in given:
        return headers
    key = next((environ[v] for v in auth.variables if environ.get(v)), None)
    if key is None:
        raise UsageError(f"set {' or '.join(auth.variables)} to the {provider} API key (or pass --header)")
    headers[auth.header] = auth.template.format(key)
    return headers


def _body(path: str, stdin: IO[bytes]) -> Any:
    try:
        if path == "-":
            data = stdin.read()
        else:
            with open(path, "rb") as file:
                data = file.read()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    try:
        return json.loads(data)
    except ValueError as exc:
        raise UsageError(f"{path} is not JSON: {exc}") from None


class _Recorder:
    """Writes the body to the transcript file, created at the first byte: a refusal writes none."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._file: IO[bytes] | None = None

    def __call__(self, chunk: bytes) -> None:
        if self._file is None:
            self._file = open(self.path, "wb")  # noqa: SIM115 - closed by close()
        self._file.write(chunk)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()


def run(
    args: argparse.Namespace,
    emit: Callable[[StreamEvent], None],
    err: Any,
    stdin: IO[bytes],
    environ: Mapping[str, str] = os.environ,
) -> int:
    """Run ``live`` or ``record``; ``emit`` prints one value as ``replay`` does."""
    if args.provider not in DECODERS:
        known = ", ".join(sorted(DECODERS))
        print(f"streamkit: error: unknown provider {args.provider!r}; known providers: {known}", file=err)
        return EXIT_USAGE
    try:
        headers = _headers(args.provider, args.header, environ)
        body = _body(args.body, stdin)
    except UsageError as exc:
        print(f"streamkit: error: {exc}", file=err)
        return EXIT_USAGE
    recorder = _Recorder(args.output) if args.command == "record" else None
    timeout = httpx.Timeout(args.timeout, connect=min(args.timeout, 30.0))
    try:
        with (
            httpx.Client(timeout=timeout) as client,
            stream(client, args.provider, args.url, json=body, headers=headers, tee=recorder) as events,
        ):
            for item in events:
                emit(item)
    except (StreamError, TransportError) as exc:
        for call in exc.unfinished:
            emit(call)
        print(f"streamkit: error: {exc}", file=err)
        return EXIT_STREAM_ERROR
    except UsageError as exc:  # a URL httpx cannot send to
        print(f"streamkit: error: {exc}", file=err)
        return EXIT_USAGE
    except OSError as exc:
        if recorder is None:
            raise
        print(f"streamkit: error: cannot write {recorder.path}: {exc.strerror}", file=err)
        return EXIT_USAGE
    finally:
        if recorder is not None:
            recorder.close()
    return EXIT_OK
