"""Images carried between formats: in a user's message and in a tool's result, read from each
client format and written as each upstream's, exactly; what a format cannot take is refused by name."""

from __future__ import annotations

from typing import Any

import pytest

from streamkit._errors import UsageError
from streamkit._turn_types import Image, Parts, User
from streamkit._types import ToolCall, ToolResult
from streamkit.adapters import ADAPTERS
from streamkit.serve._translate import translate

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
DATA_URL = f"data:image/png;base64,{PNG}"
ASKED = "What is this?"
ANTHROPIC_IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}

#: One user message, an image then a question, as each client format sends it.
SHOWN: dict[str, dict[str, Any]] = {
    "anthropic": {
        "model": "m",
        "max_tokens": 100,
        "messages": [{"role": "user", "content": [ANTHROPIC_IMAGE, {"type": "text", "text": ASKED}]}],
    },
    "openai_chat": {
        "model": "m",
        "messages": [
            {
                "role": "user",
                "content": [{"type": "image_url", "image_url": {"url": DATA_URL}}, {"type": "text", "text": ASKED}],
            }
        ],
    },
    "openai_responses": {
        "model": "m",
        "input": [
            {
                "role": "user",
                "content": [{"type": "input_image", "image_url": DATA_URL}, {"type": "input_text", "text": ASKED}],
            }
        ],
    },
}
CHAT_SHOWN = [
    {
        "role": "user",
        "content": [{"type": "image_url", "image_url": {"url": DATA_URL}}, {"type": "text", "text": ASKED}],
    }
]
#: The same message as each upstream is sent it: where its body holds the history, and the history.
WRITTEN: dict[str, tuple[str, list[dict[str, Any]]]] = {
    "anthropic": ("messages", [{"role": "user", "content": [ANTHROPIC_IMAGE, {"type": "text", "text": ASKED}]}]),
    "openai_chat": ("messages", CHAT_SHOWN),
    "mistral": ("messages", CHAT_SHOWN),
    "openai_responses": (
        "input",
        [
            {
                "role": "user",
                "content": [
                    {"type": "input_image", "image_url": DATA_URL, "detail": "auto"},
                    {"type": "input_text", "text": ASKED},
                ],
            }
        ],
    ),
    "gemini": (
        "contents",
        [{"role": "user", "parts": [{"inlineData": {"mimeType": "image/png", "data": PNG}}, {"text": ASKED}]}],
    ),
    "ollama": ("messages", [{"role": "user", "content": ASKED, "images": [PNG]}]),
}
PAIRS = [(client, upstream) for client in SHOWN for upstream in WRITTEN if upstream != client]


@pytest.mark.parametrize(("client", "upstream"), PAIRS)
def test_a_users_image_is_written_as_the_upstreams(client: str, upstream: str) -> None:
    translated = translate(client, upstream, SHOWN[client])
    assert translated.asked.entries == (User(Parts((Image("image/png", data=PNG), ASKED))),)
    key, history = WRITTEN[upstream]
    assert translated.body[key] == history


CALL = {"type": "tool_use", "id": "call_1", "name": "Read", "input": {"file_path": "c.png"}}
#: A call of Claude Code's Read tool on an image file, and its result: a line of text and the image.
READ: dict[str, dict[str, Any]] = {
    "anthropic": {
        "model": "m",
        "max_tokens": 100,
        "messages": [
            {"role": "user", "content": "Show the chart."},
            {"role": "assistant", "content": [CALL]},
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "call_1",
                        "content": [{"type": "text", "text": "c.png:"}, ANTHROPIC_IMAGE],
                    }
                ],
            },
        ],
    },
    "openai_responses": {
        "model": "m",
        "input": [
            {"role": "user", "content": "Show the chart."},
            {"type": "function_call", "call_id": "call_1", "name": "Read", "arguments": '{"file_path":"c.png"}'},
            {
                "type": "function_call_output",
                "call_id": "call_1",
                "output": [{"type": "input_text", "text": "c.png:"}, {"type": "input_image", "image_url": DATA_URL}],
            },
        ],
    },
}
#: The result as the upstreams whose tool results carry images are sent it: the history's last entry.
RESULT: dict[str, tuple[str, dict[str, Any]]] = {
    "anthropic": (
        "messages",
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "call_1",
                    "content": [{"type": "text", "text": "c.png:"}, ANTHROPIC_IMAGE],
                }
            ],
        },
    ),
    "openai_responses": (
        "input",
        {
            "type": "function_call_output",
            "call_id": "call_1",
            "output": [
                {"type": "input_text", "text": "c.png:"},
                {"type": "input_image", "image_url": DATA_URL, "detail": "auto"},
            ],
        },
    ),
    "gemini": (
        "contents",
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "id": "call_1",
                        "name": "Read",
                        "response": {"output": "c.png:"},
                        "parts": [{"inlineData": {"mimeType": "image/png", "data": PNG}}],
                    }
                }
            ],
        },
    ),
}


@pytest.mark.parametrize(
    ("client", "upstream"), [(client, upstream) for client in READ for upstream in RESULT if upstream != client]
)
def test_an_image_in_a_tool_result_is_written_as_the_upstreams(client: str, upstream: str) -> None:
    key, last = RESULT[upstream]
    assert translate(client, upstream, READ[client]).body[key][-1] == last


#: The result as the upstreams whose tool results carry text are sent it: its tool message, then
#: a user message showing its image, named by the call.
SHOWN_AFTER: dict[str, list[dict[str, Any]]] = {
    "openai_chat": [
        {"role": "tool", "tool_call_id": "call_1", "content": "c.png:\n\n(1 image follows in a user message)"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "The image Read (call call_1) returned:"},
                {"type": "image_url", "image_url": {"url": DATA_URL}},
            ],
        },
    ],
    "ollama": [
        {"role": "tool", "tool_name": "Read", "content": "c.png:\n\n(1 image follows in a user message)"},
        {"role": "user", "content": "The image Read (call call_1) returned:", "images": [PNG]},
    ],
}
TEXT_RESULTS = tuple(SHOWN_AFTER)


@pytest.mark.parametrize("client", list(READ))
def test_an_image_in_a_tool_result_is_refused_by_mistral(client: str) -> None:
    """Mistral's tool messages carry text, and its validator refuses a user message after a tool
    message (mistral-common: "Unexpected role 'user' after role 'tool'"): a 400 naming the call."""
    with pytest.raises(UsageError) as raised:
        translate(client, "mistral", READ[client])
    assert str(raised.value) == (
        "the result of Read (call call_1) holds an image, which this provider's tool results cannot carry"
    )


@pytest.mark.parametrize(("client", "upstream"), [(c, u) for c in READ for u in TEXT_RESULTS])
def test_an_image_in_a_tool_result_follows_the_tool_messages_where_results_are_text(client: str, upstream: str) -> None:
    """The tool message keeps the result's text and says an image follows; one user message
    after it shows the image, named by the call: nothing dropped, nothing refused."""
    assert translate(client, upstream, READ[client]).body["messages"][2:] == SHOWN_AFTER[upstream]


JPEG = "/9j/4AAQSkZJRgABAQ=="
#: Two calls of Read, the first returning two images, the second one, each after a line of text.
TWO_READS = {
    "model": "m",
    "max_tokens": 100,
    "messages": [
        {"role": "user", "content": "Show both charts."},
        {"role": "assistant", "content": [CALL, {**CALL, "id": "call_2", "input": {"file_path": "d.png"}}]},
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "call_1",
                    "content": [
                        {"type": "text", "text": "c.png:"},
                        ANTHROPIC_IMAGE,
                        {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": JPEG}},
                    ],
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "call_2",
                    "content": [{"type": "text", "text": "d.png:"}, ANTHROPIC_IMAGE],
                },
            ],
        },
    ],
}
CHAT_TWO_SHOWN = [
    {"type": "text", "text": "The 2 images Read (call call_1) returned:"},
    {"type": "image_url", "image_url": {"url": DATA_URL}},
    {"type": "image_url", "image_url": {"url": f"data:image/jpeg;base64,{JPEG}"}},
    {"type": "text", "text": "The image Read (call call_2) returned:"},
    {"type": "image_url", "image_url": {"url": DATA_URL}},
]


@pytest.mark.parametrize(
    ("upstream", "written"),
    [
        (
            "openai_chat",
            [
                {"role": "tool", "tool_call_id": "call_1", "content": "c.png:\n\n(2 images follow in a user message)"},
                {"role": "tool", "tool_call_id": "call_2", "content": "d.png:\n\n(1 image follows in a user message)"},
                {"role": "user", "content": CHAT_TWO_SHOWN},
            ],
        ),
        (
            "ollama",
            [
                {"role": "tool", "tool_name": "Read", "content": "c.png:\n\n(2 images follow in a user message)"},
                {"role": "tool", "tool_name": "Read", "content": "d.png:\n\n(1 image follows in a user message)"},
                {
                    "role": "user",
                    "content": "The 2 images Read (call call_1) returned:\n\nThe image Read (call call_2) returned:",
                    "images": [PNG, JPEG, PNG],
                },
            ],
        ),
    ],
)
def test_the_images_of_two_results_follow_all_the_tool_messages_in_call_order(
    upstream: str, written: list[dict[str, Any]]
) -> None:
    """The tool messages answer the calls right after the assistant message, so the one user
    message showing the images comes after all of them, each call's images in call order."""
    assert translate("anthropic", upstream, TWO_READS).body["messages"][2:] == written


@pytest.mark.parametrize("upstream", ["openai_responses", *TEXT_RESULTS])
def test_an_error_result_holding_an_image_is_refused(upstream: str) -> None:
    request = READ["anthropic"]
    result = {**request["messages"][2]["content"][0], "is_error": True}
    failed = {**request, "messages": [*request["messages"][:2], {"role": "user", "content": [result]}]}
    with pytest.raises(UsageError) as raised:
        translate("anthropic", upstream, failed)
    assert str(raised.value) == (
        "messages[2].content[0].content: an error result holding an image; an error is told as text"
    )


URL = "https://example.com/c.png"


@pytest.mark.parametrize(
    ("upstream", "written"),
    [
        ("anthropic", {"type": "image", "source": {"type": "url", "url": URL}}),
        ("openai_chat", {"type": "image_url", "image_url": {"url": URL}}),
        ("openai_responses", {"type": "input_image", "image_url": URL, "detail": "auto"}),
    ],
)
def test_an_image_by_url_goes_on_as_its_url(upstream: str, written: dict[str, Any]) -> None:
    request = {**SHOWN["openai_chat"], "messages": [{"role": "user", "content": [_chat_image(URL)]}]}
    key, _ = WRITTEN[upstream]
    assert translate("openai_chat", upstream, request).body[key] == [{"role": "user", "content": [written]}]


def test_an_image_by_url_is_refused_by_gemini_which_needs_its_media_type() -> None:
    source = {"type": "url", "url": URL}
    request = {"model": "m", "messages": [{"role": "user", "content": [{"type": "image", "source": source}]}]}
    with pytest.raises(UsageError) as raised:
        translate("anthropic", "gemini", request)
    assert str(raised.value) == (
        f"the image at {URL}: Gemini takes an image by URL only with its media type, which the request does not "
        "give; send the image's data (base64)"
    )


def test_an_image_by_url_is_refused_by_ollama_which_takes_bytes() -> None:
    request = {**SHOWN["openai_chat"], "messages": [{"role": "user", "content": [_chat_image(URL)]}]}
    with pytest.raises(UsageError) as raised:
        translate("openai_chat", "ollama", request)
    assert str(raised.value) == f"the image at {URL}: Ollama takes an image's data (base64), not its URL"


def test_detail_is_left_out_and_named() -> None:
    request = {"model": "m", "messages": [{"role": "user", "content": [_chat_image(DATA_URL, "low")]}]}
    translated = translate("openai_chat", "anthropic", request)
    assert translated.body["messages"] == [{"role": "user", "content": [ANTHROPIC_IMAGE]}]
    assert translated.asked.dropped == (
        "messages[0].content[0].image_url.detail ('low': a cost hint for OpenAI's servers; the upstream reads "
        "the image at its own resolution)",
    )
    given = {
        "model": "m",
        "input": [{"role": "user", "content": [{"type": "input_image", "image_url": URL, "detail": "high"}]}],
    }
    assert translate("openai_responses", "anthropic", given).asked.dropped == (
        "input[0].content[0].detail ('high': a cost hint for OpenAI's servers; the upstream reads the image at its "
        "own resolution)",
    )


def _chat_image(url: str, detail: str | None = None) -> dict[str, Any]:
    image = {"url": url} if detail is None else {"url": url, "detail": detail}
    return {"type": "image_url", "image_url": image}


def test_text_alone_is_written_as_before() -> None:
    """A message of text parts is one text, as before images were carried."""
    request = {
        "model": "m",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}],
    }
    assert translate("anthropic", "openai_chat", request).body["messages"] == [{"role": "user", "content": "a\n\nb"}]


@pytest.mark.parametrize(
    ("build", "said"),
    [
        (lambda: Image("image/png"), "an Image is given either its data (base64) or its url"),
        (lambda: Image("image/png", data="x", url=URL), "an Image is given either its data (base64) or its url"),
        (lambda: Image(None, data="x"), "an Image given as data needs its media_type (image/png...)"),
        (lambda: Parts((1,)), "parts[0] is text or an Image, not int"),  # type: ignore[arg-type]
    ],
)
def test_an_image_is_its_data_or_its_url(build: Any, said: str) -> None:
    with pytest.raises(UsageError) as raised:
        build()
    assert str(raised.value) == said
    assert repr(Image("image/png", data=PNG)) == "Image('image/png', data=<96 chars>)"
    assert User("hi").text == "hi" and User(Parts(("a", Image(None, url=URL), "b"))).text == "a\n\nb"


def test_a_tool_results_parts_are_written_by_every_adapter_that_carries_images() -> None:
    """``(call, Parts)`` and a ``ToolResult`` whose output is ``Parts`` write the same entries,
    in the results or after them; an adapter that can show no image refuses either, naming the call."""
    call = ToolCall(0, "call_1", "Read", {"file_path": "c.png"})
    shown = Parts(("c.png:", Image("image/png", data=PNG)))
    for provider in ("anthropic", "openai_responses", "gemini", "openai_chat", "ollama"):
        written = ADAPTERS[provider].tool_results_message([(call, shown)])
        assert ADAPTERS[provider].tool_results_message([ToolResult(call, shown)]) == written
    for provider in ("cohere", "bedrock", "mistral"):
        with pytest.raises(UsageError, match=r"^the result of Read \(call call_1\) holds an image"):
            ADAPTERS[provider].tool_results_message([ToolResult(call, shown)])
    text = ADAPTERS["openai_chat"].tool_results_message([(call, Parts(("a", "b")))])
    assert text == [{"role": "tool", "tool_call_id": "call_1", "content": "a\n\nb"}]


def test_a_chat_adapter_shows_an_image_alone_or_by_url_after_the_results_and_refuses_one_in_an_error() -> None:
    """A result of an image alone is told in its tool message by the note; an image by URL goes
    on as its URL; an error holding an image is refused, since an error is told as text."""
    call = ToolCall(0, "call_1", "Read", {"file_path": "c.png"})
    written = ADAPTERS["openai_chat"].tool_results_message([(call, Parts((Image(None, url=URL),)))])
    assert written == [
        {"role": "tool", "tool_call_id": "call_1", "content": "(1 image follows in a user message)"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "The image Read (call call_1) returned:"},
                {"type": "image_url", "image_url": {"url": URL}},
            ],
        },
    ]
    for provider in TEXT_RESULTS:
        with pytest.raises(UsageError) as raised:
            ADAPTERS[provider].tool_result_message(call, Parts(("bad", Image("image/png", data=PNG))), is_error=True)
        assert str(raised.value) == (
            "the error result of Read (call call_1) holds an image; an error is told to the model as text"
        )


def test_an_image_by_url_in_a_tool_result_is_refused_by_ollama_as_a_users_is() -> None:
    request = READ["anthropic"]
    result = {
        **request["messages"][2]["content"][0],
        "content": [{"type": "image", "source": {"type": "url", "url": URL}}],
    }
    given = {**request, "messages": [*request["messages"][:2], {"role": "user", "content": [result]}]}
    with pytest.raises(UsageError) as raised:
        translate("anthropic", "ollama", given)
    assert str(raised.value) == f"the image at {URL}: Ollama takes an image's data (base64), not its URL"
