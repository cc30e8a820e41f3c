"""``streamkit serve``'s paths around the answers: the model list and the count of input tokens.

The official SDKs call them as Claude Code, OpenAI SDK programs and the AI SDK do: the model
list (``GET /v1/models``, one model at ``/v1/models/{id}``) in the shape of the client's format,
from the routes' models or an upstream's own list; Anthropic's ``count_tokens``, the upstream's
own on a same-format route, an estimate on a route to another format.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

pytest.importorskip("uvicorn")  # the proxy

from .server import LoopbackServer, Reply
from .serving import CLIENTS, PROXY_KEY, UPSTREAM_KEY, Proxy, keyed_proxy, route

anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
OPENAI_LIST = {
    "object": "list",
    "data": [
        {"id": "gpt-4o", "object": "model", "created": 1715367049, "owned_by": "system"},
        {"id": "o3", "object": "model", "created": 1744225308, "owned_by": "openai"},
    ],
}
ANTHROPIC_LIST = {
    "data": [
        {
            "type": "model",
            "id": "claude-sonnet-4-5",
            "display_name": "Claude Sonnet 4.5",
            "created_at": "2025-09-29T00:00:00Z",
        }
    ],
    "has_more": False,
    "first_id": "claude-sonnet-4-5",
    "last_id": "claude-sonnet-4-5",
}


@pytest.fixture(autouse=True)
def fresh(upstream: LoopbackServer) -> None:
    upstream.routes.clear()
    upstream.requests.clear()


def claude(served: Proxy, key: str = PROXY_KEY) -> Any:
    return CLIENTS.add(anthropic.Anthropic(base_url=served.url, api_key=key, max_retries=0))


def gpt(served: Proxy, key: str = PROXY_KEY) -> Any:
    return CLIENTS.add(openai.OpenAI(base_url=served.url + "/v1", api_key=key, max_retries=0))


def json_reply(body: Any) -> Reply:
    return Reply([json.dumps(body).encode()], content_type="application/json")


def test_an_anthropic_client_lists_the_routes_named_models_in_anthropics_shape(upstream: LoopbackServer) -> None:
    routes = [
        route(upstream, "anthropic", models=["claude-a", "claude-b-*"]),
        route(upstream, "openai_chat", models=["gpt-x"]),
        route(upstream, "anthropic", models=["claude-c", "claude-a"]),
    ]
    with keyed_proxy(upstream, *routes) as served:
        page = claude(served).models.list()
        raw = httpx.get(served.url + "/v1/models", headers={"x-api-key": PROXY_KEY, "anthropic-version": "2023-06-01"})
        one = claude(served).models.retrieve("claude-c")
    assert [model.model_dump(exclude_unset=True) for model in page.data] == [
        {"id": "claude-a", "created_at": EPOCH, "display_name": "claude-a", "type": "model"},
        {"id": "claude-c", "created_at": EPOCH, "display_name": "claude-c", "type": "model"},
    ]
    assert raw.json() == {
        "data": [
            {"type": "model", "id": "claude-a", "display_name": "claude-a", "created_at": "1970-01-01T00:00:00Z"},
            {"type": "model", "id": "claude-c", "display_name": "claude-c", "created_at": "1970-01-01T00:00:00Z"},
        ],
        "has_more": False,
        "first_id": "claude-a",
        "last_id": "claude-c",
    }
    assert one.model_dump(exclude_unset=True) == {
        "id": "claude-c",
        "created_at": EPOCH,
        "display_name": "claude-c",
        "type": "model",
    }
    assert upstream.requests == []


def test_an_openai_client_lists_the_chat_and_responses_routes_models_in_openais_shape(
    upstream: LoopbackServer,
) -> None:
    routes = [
        route(upstream, "anthropic", models=["claude-a"]),
        route(upstream, "openai_chat", models=["gpt-x", "llama*"]),
        route(upstream, "openai_responses", models=["gpt-y"]),
    ]
    with keyed_proxy(upstream, *routes) as served:
        client = gpt(served)
        listed = [model.model_dump(exclude_unset=True) for model in client.models.list()]
        one = client.models.retrieve("gpt-y").model_dump(exclude_unset=True)
        with pytest.raises(openai.NotFoundError) as missing:
            client.models.retrieve("llama-3")
    assert listed == [
        {"id": "gpt-x", "created": 0, "object": "model", "owned_by": "system"},
        {"id": "gpt-y", "created": 0, "object": "model", "owned_by": "system"},
    ]
    assert one == {"id": "gpt-y", "created": 0, "object": "model", "owned_by": "system"}
    assert missing.value.body == {
        "message": "no model 'llama-3' is served here",
        "type": "not_found_error",
        "param": None,
        "code": None,
    }


def test_a_route_serving_every_model_passes_its_upstreams_own_list_on(upstream: LoopbackServer) -> None:
    body = json.dumps(OPENAI_LIST).encode()
    upstream.routes["/v1/models"] = Reply([body], content_type="application/json")
    upstream.routes["/v1/models/o3"] = json_reply(OPENAI_LIST["data"][1])
    with keyed_proxy(upstream, route(upstream)) as served:
        client = gpt(served)
        raw = client.models.with_raw_response.list()
        one = client.models.retrieve("o3").model_dump(exclude_unset=True)
    assert raw.http_response.content == body
    assert [model.id for model in raw.parse()] == ["gpt-4o", "o3"]
    assert one == {"id": "o3", "created": 1744225308, "object": "model", "owned_by": "openai"}
    assert [(r.method, r.target, r.headers["authorization"]) for r in upstream.requests] == [
        ("GET", "/v1/models", f"Bearer {UPSTREAM_KEY}"),
        ("GET", "/v1/models/o3", f"Bearer {UPSTREAM_KEY}"),
    ]


def test_an_upstream_of_another_format_has_its_list_rewritten_in_the_clients_shape(upstream: LoopbackServer) -> None:
    upstream.routes["/v1/models"] = json_reply(OPENAI_LIST)
    routes = [route(upstream, "anthropic", upstream_format="openai_chat"), route(upstream, "anthropic", models=["m"])]
    with keyed_proxy(upstream, *routes) as served:
        page = claude(served).models.list()
        one = claude(served).models.retrieve("o3")
    assert [model.model_dump(exclude_unset=True) for model in page.data] == [
        {
            "id": "gpt-4o",
            "created_at": datetime(2024, 5, 10, 18, 50, 49, tzinfo=UTC),
            "display_name": "gpt-4o",
            "type": "model",
        },
        {"id": "o3", "created_at": datetime(2025, 4, 9, 19, 1, 48, tzinfo=UTC), "display_name": "o3", "type": "model"},
        {"id": "m", "created_at": EPOCH, "display_name": "m", "type": "model"},
    ]
    assert one.id == "o3"
    assert upstream.requests[0].headers["authorization"] == f"Bearer {UPSTREAM_KEY}"


def test_an_openai_client_on_an_anthropic_upstream_reads_its_list_in_openais_shape(upstream: LoopbackServer) -> None:
    upstream.routes["/v1/models"] = json_reply(ANTHROPIC_LIST)
    with keyed_proxy(upstream, route(upstream, "openai_chat", upstream_format="anthropic")) as served:
        listed = [model.model_dump(exclude_unset=True) for model in gpt(served).models.list()]
    assert listed == [{"id": "claude-sonnet-4-5", "created": 1759104000, "object": "model", "owned_by": "anthropic"}]
    (sent,) = upstream.requests
    # the whole list on one page: Anthropic's pages hold 20 models unless asked for more (1,000 at most)
    assert (sent.target, sent.headers["x-api-key"], sent.headers["anthropic-version"]) == (
        "/v1/models?limit=1000",
        UPSTREAM_KEY,
        "2023-06-01",
    )
    assert "authorization" not in sent.headers


def test_an_upstream_list_that_fails_is_the_clients_error_in_its_shape(upstream: LoopbackServer) -> None:
    said = json.dumps({"error": {"message": f"bad key {UPSTREAM_KEY}"}}).encode()
    upstream.routes["/v1/models"] = Reply([said], status=401, reason="Unauthorized", content_type="application/json")
    served_route = route(upstream, "anthropic", upstream_format="openai_chat")
    with keyed_proxy(upstream, served_route) as served, pytest.raises(anthropic.AuthenticationError) as failed:
        claude(served).models.list()
    assert failed.value.body == {
        "type": "error",
        "error": {
            "type": "api_error",
            "message": 'the upstream\'s model list answered 401: {"error": {"message": "bad key [REDACTED]"}}',
        },
    }


REFUSED = "a missing or wrong proxy key"


@pytest.mark.parametrize("sdk", ["anthropic", "openai"])
def test_a_wrong_key_is_a_401_in_the_clients_shape(upstream: LoopbackServer, sdk: str) -> None:
    body: dict[str, Any]
    with keyed_proxy(upstream, route(upstream), route(upstream, "anthropic")) as served:
        if sdk == "anthropic":
            with pytest.raises(anthropic.AuthenticationError) as failed:
                claude(served, "sk-wrong-key-0123456789").models.list()
            body = {
                "type": "error",
                "error": {"type": "authentication_error", "message": "a missing or wrong proxy key"},
            }
        else:
            with pytest.raises(openai.AuthenticationError) as failed:
                gpt(served, "sk-wrong-key-0123456789").models.list()
            body = {
                "message": "a missing or wrong proxy key",
                "type": "authentication_error",
                "param": None,
                "code": None,
            }
    assert (failed.value.status_code, failed.value.body) == (401, body)
    assert upstream.requests == []


MESSAGES = [{"role": "user", "content": "Weather in Paris?"}]
TOOLS = [{"name": "get_weather", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}]


def test_count_tokens_on_an_anthropic_upstream_is_its_own(upstream: LoopbackServer) -> None:
    upstream.routes["/v1/messages/count_tokens"] = json_reply({"input_tokens": 42})
    with keyed_proxy(upstream, route(upstream, "anthropic")) as served:
        counted = claude(served).messages.count_tokens(model="claude-x", messages=MESSAGES, tools=TOOLS)
    assert counted.input_tokens == 42
    (sent,) = upstream.requests
    assert (sent.method, sent.target, sent.headers["x-api-key"]) == ("POST", "/v1/messages/count_tokens", UPSTREAM_KEY)
    assert json.loads(sent.body) == {"model": "claude-x", "messages": MESSAGES, "tools": TOOLS}


def test_count_tokens_on_an_upstream_of_another_format_is_an_estimate_marked_so(upstream: LoopbackServer) -> None:
    with keyed_proxy(upstream, route(upstream, "anthropic", upstream_format="openai_chat")) as served:
        raw = claude(served).messages.with_raw_response.count_tokens(
            model="claude-x", system="Be brief.", messages=MESSAGES, tools=TOOLS
        )
    # 9 characters of system text, 47 of messages and 97 of tools as JSON: 153, by 4, rounded up
    assert [len(json.dumps(part, separators=(",", ":"))) for part in (MESSAGES, TOOLS)] == [47, 97]
    assert (raw.parse().input_tokens, raw.headers["x-streamkit-estimate"]) == (39, "true")
    assert upstream.requests == []


def test_count_tokens_with_a_wrong_key_is_a_401(upstream: LoopbackServer) -> None:
    wrong = "sk-wrong-key-0123456789"
    with (
        keyed_proxy(upstream, route(upstream, "anthropic")) as served,
        pytest.raises(anthropic.AuthenticationError) as failed,
    ):
        claude(served, wrong).messages.count_tokens(model="claude-x", messages=MESSAGES)
    assert failed.value.body == {
        "type": "error",
        "error": {"type": "authentication_error", "message": "a missing or wrong proxy key"},
    }
    assert upstream.requests == []
