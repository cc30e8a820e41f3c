"""The ``serve`` sub-command: its flags, the config they make, and running uvicorn.

Kept apart from the app so that ``streamkit --help`` and ``streamkit replay`` load neither
uvicorn nor httpx: they are imported when ``serve`` runs, and a missing extra is one line.
"""

from __future__ import annotations

import argparse
import dataclasses
import errno
import logging
import os
import socket
from typing import Any, TextIO

from .._errors import UsageError
from .._limits import Limits
from ..providers import ASKED, ENCODERS, REQUESTS, WRITERS
from ._config import EMIT_MODES, INVALID_POLICIES, TIMEOUTS, Config, load_config, parse_config
from ._example import example_hint, example_route
from ._formats import FORMATS

__all__ = ("add_command", "config_of", "log_to", "run", "server_options")

EXIT_OK, EXIT_USAGE = 0, 2

_TIMEOUT_HELP = {
    "head_timeout": "seconds a client has to send a request's head",
    "body_timeout": "seconds to wait for the next piece of a request body",
    "send_timeout": "seconds a response waits on a client that reads nothing",
    "keep_alive_timeout": "seconds an idle connection is kept",
}


def add_command(commands: Any) -> argparse.ArgumentParser:
    text = "run an HTTP proxy that streams back canonical, checked tool calls"
    command: argparse.ArgumentParser = commands.add_parser("serve", help=text, description=text)
    formats = ", ".join(FORMATS)
    command.add_argument("--config", default=None, help="a TOML config file ([server] and [[route]] tables)")
    command.add_argument(
        "--upstream",
        action="append",
        default=[],
        metavar="FORMAT=URL",
        help=f"route FORMAT ({formats}, or an upstream-only one) to the upstream base URL "
        "(e.g. openai_chat=http://127.0.0.1:11434/v1); clients of another format are sent there translated",
    )
    command.add_argument(
        "--upstream-key-env", action="append", default=[], metavar="FORMAT=VAR", help="the upstream's key variable"
    )
    command.add_argument("--pass-key", action="store_true", help="pass the client's own key on to the upstreams")
    command.add_argument("--invalid", choices=INVALID_POLICIES, default=None, help="what to do with an invalid call")
    command.add_argument(
        "--early-close", action="store_true", help="end an OpenAI Chat call when the next starts (see docs/serve.md)"
    )
    command.add_argument(
        "--emit",
        choices=EMIT_MODES,
        default=None,
        help="write each call whole (default) or as fragments as they arrive",
    )
    command.add_argument(
        "--otel", action="store_true", help="record each stream with OpenTelemetry (the otel extra; see docs/serve.md)"
    )
    command.add_argument("--host", default=None, help="the address to listen on (default 127.0.0.1)")
    command.add_argument("--port", type=int, default=None, help="the port to listen on (default 8080)")
    command.add_argument("--workers", type=int, default=None, help="worker processes (default 1)")
    command.add_argument("--proxy-key-env", default=None, metavar="VAR", help="the variable holding the proxy key(s)")
    for name, default in TIMEOUTS.items():
        flag = "--" + name.replace("_", "-")
        what = _TIMEOUT_HELP[name]
        command.add_argument(flag, type=float, default=None, metavar="SECONDS", help=f"{what} (default {default:g})")
    command.add_argument(
        "--max-head-bytes", type=int, default=None, metavar="N", help="the largest request head (default 16384)"
    )
    command.add_argument(
        "--max-concurrency", type=int, default=None, metavar="N", help="connections a worker holds; past it, 503"
    )
    command.add_argument(
        "--trusted-proxy",
        action="append",
        default=None,
        dest="trusted_proxies",
        metavar="ADDRESS",
        help="believe X-Forwarded-For from this address or network (repeat for several; default none)",
    )
    command.add_argument(
        "--example", action="store_true", help="route OpenAI Chat to a bundled recorded stream served on /example/v1"
    )
    return command


def config_of(args: argparse.Namespace, limits: Limits) -> Config:
    """The config file's values, then the flags over them; ``--upstream`` routes go first."""
    base = load_config(args.config).to_dict() if args.config else {"server": {}, "route": []}
    server = base["server"]
    for name in ("host", "port", "workers", "proxy_key_env", *TIMEOUTS, "max_head_bytes", "max_concurrency"):
        if getattr(args, name) is not None:
            server[name] = getattr(args, name)
    if args.trusted_proxies is not None:
        server["trusted_proxies"] = args.trusted_proxies
    keys = dict(_pair(item, "--upstream-key-env", _UPSTREAMS) for item in args.upstream_key_env)
    upstreams = [_pair(item, "--upstream", _UPSTREAMS) for item in args.upstream]
    routes = [_flag_route(fmt, slug, url, keys, args, limits) for fmt, slug, url in _routed(upstreams)]
    if args.otel:
        server["telemetry"] = True
    if args.example:
        server["example"] = True
        routes.append(example_route(server.get("host", "127.0.0.1"), server.get("port", 8080)))
    return parse_config({"server": server, "route": routes + base["route"]}, where="the flags")


def _routed(upstreams: list[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """Each client format's upstream, as ``(format, upstream's format, URL)``: an upstream of its
    own format where one is given, else the first given whose format it can be sent to (Claude
    Code on an OpenAI-compatible server from ``--upstream openai_chat=URL`` alone)."""
    own = {slug: url for slug, url in reversed(upstreams)}
    routes = [(slug, slug, url) for slug, url in upstreams if slug in FORMATS]
    for fmt in FORMATS:
        if fmt in own or fmt not in ASKED or fmt not in WRITERS:
            continue
        target = next(((slug, url) for slug, url in upstreams if slug in REQUESTS and slug in ENCODERS), None)
        if target is not None:
            routes.append((fmt, *target))
    return routes


def _flag_route(
    fmt: str, slug: str, url: str, keys: dict[str, str], args: argparse.Namespace, limits: Limits
) -> dict[str, Any]:
    route: dict[str, Any] = {"format": fmt, "upstream": url, "limits": dataclasses.asdict(limits)}
    if slug != fmt:
        route["upstream_format"] = slug
    if slug in keys:
        route["key_env"] = keys[slug]
    if args.pass_key:
        route["pass_key"] = True
    if args.invalid is not None:
        route["invalid"] = args.invalid
    if args.early_close:
        route["early_close"] = True
    if args.emit is not None and slug == fmt:  # a route sent to another format writes calls whole
        route["emit"] = args.emit
    return route


def _pair(item: str, flag: str, names: tuple[str, ...]) -> tuple[str, str]:
    name, sep, value = item.partition("=")
    if not sep or not name or not value:
        raise UsageError(f"{flag} takes FORMAT=VALUE, got {item!r}")
    if name not in names:
        raise UsageError(f"{flag}: the format must be one of {', '.join(names)}, got {name!r}")
    return name, value


#: The formats an upstream may speak: those the proxy serves, and those it sends requests to
#: and reads streams of (Gemini, Mistral, an Ollama-compatible server's Chat).
_UPSTREAMS = tuple(dict.fromkeys([*FORMATS, *(slug for slug in REQUESTS if slug in ENCODERS)]))


def run(args: argparse.Namespace, err: TextIO, limits: Limits) -> int:
    try:
        config = config_of(args, limits)
        config.check_environment()  # a missing variable is told now, once, not by each worker
        _check_port(config.host, config.port)  # before uvicorn, which would print its start-up first
        import uvicorn

        from ._app import telemetry_module

        if config.telemetry:
            telemetry_module()  # a missing extra is told now, not by each worker
    except UsageError as exc:
        print(f"streamkit: error: {exc}", file=err)
        return EXIT_USAGE
    except ImportError:
        print("streamkit: error: serve needs the serve extra: pip install 'streamkit-toolcalls[serve]'", file=err)
        return EXIT_USAGE
    import orjson

    from ._app import CONFIG_VARIABLE

    os.environ[CONFIG_VARIABLE] = orjson.dumps(config.to_dict()).decode()
    if config.example:
        print(example_hint(config.host, config.port), file=err, flush=True)
    uvicorn.run(
        "streamkit.serve._app:factory",
        factory=True,
        host=config.host,
        port=config.port,
        workers=config.workers,
        access_log=False,
        log_level="info",
        **server_options(config),
    )
    return EXIT_OK


def server_options(config: Config) -> dict[str, Any]:
    """uvicorn's settings for the config: its protocol, with the timeouts and bounds (``_protocol``).

    The head and send deadlines are the protocol's own; forwarded headers are believed only from
    ``trusted_proxies`` (uvicorn's default believes loopback, so anything on the machine could
    name the client).
    """
    from ._protocol import Protocol

    return {
        "http": Protocol,
        "timeout_keep_alive": config.keep_alive_timeout,
        "h11_max_incomplete_event_size": config.max_head_bytes,
        "limit_concurrency": config.max_concurrency,
        "proxy_headers": bool(config.trusted_proxies),
        "forwarded_allow_ips": list(config.trusted_proxies),
        "timeout_graceful_shutdown": int(config.graceful_timeout),
    }


def _check_port(host: str, port: int) -> None:
    """A ``UsageError`` when ``host:port`` cannot be listened on (taken, or not this machine's)."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
            probe.bind(address)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        hint = " (another server holds it: stop it, or pass --port)" if exc.errno == errno.EADDRINUSE else ""
        raise UsageError(f"cannot listen on {host}:{port}: {reason}{hint}") from None


def log_to(stream: TextIO) -> None:
    """One JSON object a line, for each request, on ``streamkit.serve.access``."""
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger = logging.getLogger("streamkit.serve.access")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
