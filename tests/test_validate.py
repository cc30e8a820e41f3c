"""Validation against the tools actually sent: every format, every error, with its path."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from streamkit import ArgumentIssue, InvalidToolCall, ToolCall, Toolset, UsageError, iter_tool_calls

from .helpers import FIXTURES

ORDER: dict[str, Any] = {
    "type": "object",
    "properties": {
        "customer": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "vip": {"type": "boolean"}},
            "required": ["name"],
        },
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"sku": {"type": "string"}, "qty": {"type": "integer", "minimum": 1}},
                "required": ["sku", "qty"],
            },
            "minItems": 1,
        },
        "speed": {"type": "string", "enum": ["standard", "express"]},
    },
    "required": ["customer", "items"],
}
GOOD_ORDER = {"customer": {"name": "Ada"}, "items": [{"sku": "a", "qty": 1}], "speed": "express"}


def call(name: str | None, value: dict[str, Any], **kw: Any) -> ToolCall:
    return ToolCall(0, "c1", name or "", value, **kw)


def errors(result: ToolCall | InvalidToolCall) -> list[tuple[str, str | None, str]]:
    assert isinstance(result, InvalidToolCall), result
    return [(issue.kind, issue.path, issue.message) for issue in result.errors]


@pytest.fixture(scope="module")
def orders() -> Toolset:
    return Toolset({"place_order": ORDER})


# --- what the schema checks ----------------------------------------------------------------


def test_a_valid_call_comes_back_unchanged(orders: Toolset) -> None:
    good = call("place_order", GOOD_ORDER)
    assert orders.validate(good) is good


def test_missing_required_fields_are_each_reported_at_their_path(orders: Toolset) -> None:
    result = orders.validate(call("place_order", {"customer": {}}))
    assert errors(result) == [
        ("schema", "$.customer.name", 'the required property "name" is missing'),
        ("schema", "$.items", 'the required property "items" is missing'),
    ]


def test_wrong_types_and_enum_values(orders: Toolset) -> None:
    bad = {"customer": {"name": 7, "vip": "yes"}, "items": [{"sku": "a", "qty": 1}], "speed": "fast"}
    assert errors(orders.validate(call("place_order", bad))) == [
        ("schema", "$.customer.name", '7 is not of type "string"'),
        ("schema", "$.customer.vip", '"yes" is not of type "boolean"'),
        ("schema", "$.speed", '"fast" is not one of "standard" or "express"'),
    ]


def test_errors_inside_arrays_name_the_element(orders: Toolset) -> None:
    bad = {
        "customer": {"name": "Ada"},
        "items": [{"sku": "a", "qty": 1}, {"sku": "b", "qty": 2}, {"sku": "c", "qty": "3"}, {"sku": "d", "qty": 0}],
    }
    assert errors(orders.validate(call("place_order", bad))) == [
        ("schema", "$.items[2].qty", '"3" is not of type "integer"'),
        ("schema", "$.items[3].qty", "0 is less than the minimum of 1"),
    ]


def test_empty_array_against_min_items(orders: Toolset) -> None:
    bad = {"customer": {"name": "Ada"}, "items": []}
    assert errors(orders.validate(call("place_order", bad))) == [("schema", "$.items", "[] has less than 1 item")]


def test_the_invalid_call_keeps_identity_input_and_compact_raw(orders: Toolset) -> None:
    original = ToolCall(3, "toolu_9", "place_order", {"customer": {}}, choice=1, anomalies=("id_repeated",))
    result = orders.validate(original)
    assert isinstance(result, InvalidToolCall)
    assert (result.index, result.id, result.name, result.choice, result.anomalies) == (
        3,
        "toolu_9",
        "place_order",
        1,
        ("id_repeated",),
    )
    assert result.input == {"customer": {}}
    assert result.raw == '{"customer":{}}'
    assert orders.validate(original, raw='{"customer": {}}').raw == '{"customer": {}}'  # type: ignore[union-attr]


# --- undeclared properties -----------------------------------------------------------------


def test_undeclared_properties_are_reported_by_default_at_every_level(orders: Toolset) -> None:
    bad = {
        **GOOD_ORDER,
        "coupon": "X",
        "customer": {"name": "Ada", "age": 3},
        "items": [{"sku": "a", "qty": 1, "n": 1}],
    }
    assert errors(orders.validate(call("place_order", bad))) == [
        ("schema", "$.customer.age", '"age" is not a property this tool accepts'),
        ("schema", "$.items[0].n", '"n" is not a property this tool accepts'),
        ("schema", "$.coupon", '"coupon" is not a property this tool accepts'),
    ]


def test_undeclared_properties_pass_when_the_option_is_off() -> None:
    tools = Toolset({"place_order": ORDER}, report_undeclared=False)
    extra = {**GOOD_ORDER, "coupon": "X"}
    assert isinstance(tools.validate(call("place_order", extra)), ToolCall)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": True},
        {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "integer"}},
        {"type": "object", "properties": {"a": {"type": "string"}}, "patternProperties": {"^x": {}}},
    ],
    ids=["additional-true", "additional-schema", "pattern"],
)
def test_a_schema_that_decides_about_other_properties_is_left_as_written(schema: dict[str, Any]) -> None:
    tools = Toolset({"f": schema})
    result = tools.validate(call("f", {"a": "s", "x1": 1}))
    assert isinstance(result, ToolCall)


def test_additional_properties_given_as_a_schema_still_check_their_values() -> None:
    tools = Toolset({"f": {"type": "object", "properties": {}, "additionalProperties": {"type": "integer"}}})
    assert errors(tools.validate(call("f", {"x": "no"}))) == [("schema", "$.x", '"no" is not of type "integer"')]


def test_parts_of_an_allof_are_not_closed_one_by_one() -> None:
    schema = {
        "type": "object",
        "allOf": [
            {"$ref": "#/$defs/base"},
            {"properties": {"b": {"type": "integer"}}},
        ],
        "$defs": {"base": {"type": "object", "properties": {"a": {"type": "string"}}}},
    }
    tools = Toolset({"f": schema})
    assert isinstance(tools.validate(call("f", {"a": "x", "b": 1})), ToolCall)
    assert errors(tools.validate(call("f", {"a": 1, "b": 1}))) == [("schema", "$.a", '1 is not of type "string"')]


def test_a_definition_used_through_ref_is_closed() -> None:
    schema = {
        "type": "object",
        "properties": {"item": {"$ref": "#/$defs/item"}},
        "$defs": {"item": {"type": "object", "properties": {"sku": {"type": "string"}}}},
    }
    assert errors(Toolset({"f": schema}).validate(call("f", {"item": {"sku": "a", "x": 1}}))) == [
        ("schema", "$.item.x", '"x" is not a property this tool accepts')
    ]


def test_any_of_branches_are_closed_each() -> None:
    schema = {
        "type": "object",
        "properties": {
            "target": {
                "anyOf": [
                    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
                    {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]},
                ]
            }
        },
    }
    tools = Toolset({"f": schema})
    assert isinstance(tools.validate(call("f", {"target": {"url": "u"}})), ToolCall)
    result = tools.validate(call("f", {"target": {"url": "u", "path": "p"}}))
    assert [(kind, path) for kind, path, _ in errors(result)] == [("schema", "$.target")]


def test_keys_that_are_not_identifiers_are_quoted_in_the_path() -> None:
    schema = {"type": "object", "properties": {"first name": {"type": "string"}, "a.b": {"type": "integer"}}}
    result = Toolset({"f": schema}).validate(call("f", {"first name": 1, "a.b": "x"}))
    assert [path for _, path, _ in errors(result)] == ['$["first name"]', '$["a.b"]']


def test_long_messages_are_cut() -> None:
    tools = Toolset({"f": {"type": "object", "properties": {"v": {"type": "array"}}}})
    result = tools.validate(call("f", {"v": "x" * 20_000}))
    ((_, path, message),) = errors(result)
    assert path == "$.v" and len(message) == 300 and message.endswith("...")


def test_integers_beyond_64_bits_are_checked_exactly() -> None:
    tools = Toolset({"f": {"type": "object", "properties": {"n": {"type": "integer", "maximum": 10**30}}}})
    assert isinstance(tools.validate(call("f", {"n": 10**30})), ToolCall)
    assert errors(tools.validate(call("f", {"n": 10**30 + 1}))) == [
        (
            "schema",
            "$.n",
            "1000000000000000000000000000001 is greater than the maximum of 1000000000000000000000000000000",
        )
    ]


# --- unknown tools and calls that were already invalid -------------------------------------


def test_unknown_tool_names_the_offered_tools() -> None:
    tools = Toolset({"get_weather": {"type": "object"}, "get_stock": {"type": "object"}})
    result = tools.validate(call("get_time", {}))
    assert errors(result) == [
        ("unknown_tool", None, 'no tool named "get_time" was offered; the offered tools are: get_weather, get_stock')
    ]
    assert isinstance(result, InvalidToolCall) and result.input == {} and result.raw == "{}"


def test_an_invalid_call_to_an_unknown_tool_gets_both_issues() -> None:
    broken = InvalidToolCall(0, "c", "nope", "{", (ArgumentIssue("invalid_json", "bad", position=1),))
    result = Toolset({"f": {"type": "object"}}).validate(broken)
    assert errors(result) == [
        ("invalid_json", None, "bad"),
        ("unknown_tool", None, 'no tool named "nope" was offered; the offered tools are: f'),
    ]
    assert isinstance(result, InvalidToolCall) and result.raw == "{" and result.input is None


def test_an_invalid_call_to_a_known_tool_is_returned_as_is() -> None:
    broken = InvalidToolCall(0, "c", "f", "{", (ArgumentIssue("invalid_json", "bad"),))
    assert Toolset({"f": {"type": "object"}}).validate(broken) is broken


def test_an_empty_toolset_rejects_every_call() -> None:
    assert errors(Toolset([]).validate(call("f", {}))) == [
        ("unknown_tool", None, 'no tool named "f" was offered; the offered tools are: none')
    ]


# --- every tool-definition format ----------------------------------------------------------

WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
FORMATS: dict[str, Any] = {
    "openai_chat": [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER, "strict": True}}],
    "openai_responses": [{"type": "function", "name": "get_weather", "parameters": WEATHER, "strict": False}],
    "anthropic": [{"name": "get_weather", "description": "d", "input_schema": WEATHER}],
    "anthropic_custom": [{"type": "custom", "name": "get_weather", "input_schema": WEATHER}],
    "gemini_openapi": [
        {
            "functionDeclarations": [
                {
                    "name": "get_weather",
                    "parameters": {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}, "required": ["city"]},
                }
            ]
        }
    ],
    "gemini_json_schema": [{"functionDeclarations": [{"name": "get_weather", "parametersJsonSchema": WEATHER}]}],
    "gemini_snake_case": [
        {
            "function_declarations": [
                {
                    "name": "get_weather",
                    "parameters": {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}, "required": ["city"]},
                }
            ]
        }
    ],
    "gemini_bare_declaration": [{"name": "get_weather", "parameters": WEATHER}],
    "cohere_v2": [{"type": "function", "function": {"name": "get_weather", "description": "d", "parameters": WEATHER}}],
    "bedrock": [{"toolSpec": {"name": "get_weather", "description": "d", "inputSchema": {"json": WEATHER}}}],
    "mapping": {"get_weather": WEATHER},
}


@pytest.mark.parametrize("tools", FORMATS.values(), ids=FORMATS.keys())
def test_every_format_gives_the_same_checks(tools: Any) -> None:
    toolset = Toolset(tools)
    assert toolset.names == ("get_weather",)
    assert isinstance(toolset.validate(call("get_weather", {"city": "Paris"})), ToolCall)
    assert errors(toolset.validate(call("get_weather", {"city": 1, "units": "c"}))) == [
        ("schema", "$.city", '1 is not of type "string"'),
        ("schema", "$.units", '"units" is not a property this tool accepts'),
    ]


def test_formats_can_be_mixed_in_one_list() -> None:
    tools = Toolset([*FORMATS["anthropic"], {"toolSpec": {"name": "b", "inputSchema": {"json": {"type": "object"}}}}])
    assert tools.names == ("get_weather", "b") and "b" in tools and "c" not in tools


def test_gemini_built_in_tools_offer_no_function_and_computer_use_is_not_read() -> None:
    """google-genai sends each built-in tool as a tool object of its own, beside the declarations."""
    declared = FORMATS["gemini_openapi"][0]
    tools = Toolset([{"googleSearch": {}}, {"codeExecution": {}, "urlContext": {}}, declared, {"google_maps": {}}])
    assert tools.names == ("get_weather",)
    assert Toolset([{"googleSearch": {}}]).names == ()
    with pytest.raises(UsageError, match=r"^tools\[0\]: not a tool definition in a known format .* \['computerUse'\]$"):
        Toolset([{"computerUse": {"environment": "ENVIRONMENT_BROWSER"}}])


def test_gemini_openapi_schemas_are_translated() -> None:
    declaration = {
        "name": "book",
        "parameters": {
            "type": "OBJECT",
            "properties": {
                "seats": {"type": "INTEGER", "nullable": True},
                "class": {"type": "STRING", "format": "enum", "enum": ["eco", "biz"]},
                "tags": {"type": "ARRAY", "items": {"type": "STRING"}, "maxItems": "2"},
                "when": {"anyOf": [{"type": "STRING"}, {"type": "NUMBER"}]},
            },
            "propertyOrdering": ["seats", "class", "tags", "when"],
            "required": ["seats"],
        },
    }
    tools = Toolset([{"functionDeclarations": [declaration]}])
    assert isinstance(
        tools.validate(call("book", {"seats": None, "class": "eco", "tags": ["a"], "when": 1.5})), ToolCall
    )
    result = tools.validate(call("book", {"seats": "2", "class": "first", "tags": ["a", "b", "c"], "when": True}))
    assert [path for _, path, _ in errors(result)] == ["$.seats", "$.class", "$.tags", "$.when"]


def test_openai_tools_without_parameters_take_an_empty_object() -> None:
    tools = Toolset([{"type": "function", "function": {"name": "now"}}, {"type": "function", "name": "later"}])
    assert isinstance(tools.validate(call("now", {})), ToolCall)
    assert errors(tools.validate(call("later", {"x": 1}))) == [
        ("schema", "$.x", '"x" is not a property this tool accepts')
    ]


def test_provider_defined_tools_are_offered_but_not_checked() -> None:
    tools = Toolset(
        [
            {"type": "bash_20250124", "name": "bash"},
            {"type": "web_search"},  # an OpenAI built-in: never a client call, has no name
            {"toolSpec": {"name": "f", "inputSchema": {"json": {"type": "object"}}}},
            {"cachePoint": {"type": "default"}},
        ]
    )
    assert tools.names == ("bash", "f")
    assert isinstance(tools.validate(call("bash", {"anything": [1]})), ToolCall)


def test_pydantic_models_are_tools_named_after_the_class() -> None:
    pydantic = pytest.importorskip("pydantic")

    class Item(pydantic.BaseModel):  # type: ignore[name-defined,misc]
        sku: str
        qty: int

    class PlaceOrder(pydantic.BaseModel):  # type: ignore[name-defined,misc]
        items: list[Item]
        note: str | None = None

    tools = Toolset([PlaceOrder])
    assert tools.names == ("PlaceOrder",)
    assert isinstance(tools.validate(call("PlaceOrder", {"items": [{"sku": "a", "qty": 1}]})), ToolCall)
    assert errors(tools.validate(call("PlaceOrder", {"items": [{"sku": "a", "qty": "x", "z": 0}]}))) == [
        ("schema", "$.items[0].qty", '"x" is not of type "integer"'),
        ("schema", "$.items[0].z", '"z" is not a property this tool accepts'),
    ]


def test_pydantic_is_never_imported_for_plain_schemas() -> None:
    code = (
        "import sys, streamkit\n"
        "t = streamkit.Toolset([{'name': 'f', 'input_schema': {'type': 'object'}}])\n"
        "t.validate(streamkit.ToolCall(0, 'a', 'f', {}))\n"
        "assert 'pydantic' not in sys.modules, 'pydantic was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --- definitions and schemas that are wrong ------------------------------------------------


@pytest.mark.parametrize(
    ("tools", "message"),
    [
        ({"f": {"type": "nope"}}, "tools['f']: the schema of tool 'f' is not valid JSON Schema: "),
        (
            [{"name": "f", "input_schema": {"type": "object", "properties": {"p": {"pattern": "("}}}}],
            "tools[0]: the schema of tool 'f' is not valid JSON Schema: ",
        ),
        ([{"name": "f", "input_schema": {"$ref": "#/$defs/missing"}}], "tools[0]: the schema of tool 'f' is not valid"),
        ([{"name": "f", "input_schema": {"$ref": "https://example.com/s.json"}}], "tools[0]: the schema of tool 'f'"),
        ([{"name": "f", "input_schema": {"type": "object", "required": "a"}}], "tools[0]: the schema of tool 'f'"),
        ({"f": []}, "tools['f']: a JSON Schema object was expected, got list"),
        (
            [{"name": "f", "input_schema": "object"}],
            "tools[0].input_schema: a JSON Schema object was expected, got str",
        ),
        (
            [{"name": "f", "input_schema": {}}, {"name": "f", "input_schema": {}}],
            "tools[1]: the tool name 'f' is given",
        ),
        ([{"type": "function", "function": {"parameters": {}}}], "tools[0].function.name must be a non-empty string"),
        ([{"input_schema": {}}], "tools[0].name must be a non-empty string, got None"),
        ([{"description": "x"}], "tools[0]: not a tool definition in a known format"),
        (["get_weather"], "tools[0]: a tool definition must be an object or a pydantic model class"),
        ([{"toolSpec": {"name": "f"}}], "tools[0].toolSpec.inputSchema.json is missing"),
        ([{"functionDeclarations": {"name": "f"}}], "tools[0].functionDeclarations must be a list"),
        ([{"name": "f", "parameter_definitions": {}}], "tools[0]: Cohere v1 parameter_definitions are not supported"),
        ("get_weather", "tools must be a list of tool definitions or a mapping"),
        ({"": {}}, "tools['']: a tool name must be a non-empty string"),
        (
            {"name": "f", "input_schema": {}},
            "tools looks like one tool definition (keys ['input_schema', 'name']); pass a list of definitions",
        ),
        ({"functionDeclarations": []}, "tools looks like one tool definition (keys ['functionDeclarations'])"),
    ],
)
def test_bad_definitions_are_usage_errors_at_construction(tools: Any, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        Toolset(tools)
    assert str(caught.value).startswith(message), str(caught.value)


def test_a_tool_may_be_named_like_a_definition_key() -> None:
    tools = Toolset({"function": {"type": "object"}, "parameters": {"type": "object"}})
    assert tools.names == ("function", "parameters")


def test_validate_takes_only_calls() -> None:
    with pytest.raises(UsageError, match="validate takes a ToolCall, a CustomToolCall or an InvalidToolCall, got dict"):
        Toolset({}).validate({"name": "f"})  # type: ignore[call-overload]


def test_report_undeclared_must_be_a_bool() -> None:
    with pytest.raises(UsageError, match="report_undeclared must be True or False, got 'no'"):
        Toolset({}, report_undeclared="no")  # type: ignore[arg-type]


# --- in the pipeline -----------------------------------------------------------------------

STREAM = (FIXTURES / "anthropic" / "text_then_two_calls.sse").read_bytes()


def test_the_pipeline_checks_each_call_against_the_tools() -> None:
    tools = [
        {"name": "get_weather", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}},
        {"name": "get_stock", "input_schema": {"type": "object", "properties": {"ticker": {"type": "string"}}}},
    ]
    weather, stock = iter_tool_calls([STREAM], "anthropic", tools=tools)
    assert isinstance(weather, InvalidToolCall)
    assert weather.raw == '{"city": "Paris", "units": "c"}'  # the text as received
    assert weather.input == {"city": "Paris", "units": "c"}
    assert [issue.to_dict() for issue in weather.errors] == [
        {"kind": "schema", "message": '"units" is not a property this tool accepts', "path": "$.units"}
    ]
    assert stock == ToolCall(2, "toolu_B", "get_stock", {"ticker": "AAPL"})


def test_the_pipeline_takes_a_toolset_and_reuses_it() -> None:
    tools = Toolset({"get_weather": {"type": "object"}, "get_stock": {"type": "object"}}, report_undeclared=False)
    for _ in range(2):
        assert all(isinstance(c, ToolCall) for c in iter_tool_calls([STREAM], "anthropic", tools=tools))


def test_a_bad_schema_fails_before_any_byte_is_read() -> None:
    def source() -> Any:
        raise AssertionError("the source was read")
        yield b""

    with pytest.raises(UsageError, match="is not valid JSON Schema"):
        list(iter_tool_calls(source(), "anthropic", tools={"f": {"type": 5}}))


def test_a_schema_nested_too_deep_is_a_usage_error_not_a_recursion_error() -> None:
    schema: dict[str, Any] = {"type": "object"}
    for _ in range(600):
        schema = {"type": "object", "properties": {"a": schema}}
    with pytest.raises(UsageError, match=r"tools\[0\].input_schema: the schema nests objects and arrays deeper"):
        Toolset([{"name": "f", "input_schema": schema}])
    with pytest.raises(UsageError, match=r"the schema nests objects and arrays deeper than 255"):
        Toolset([{"functionDeclarations": [{"name": "f", "parameters": schema}]}])


def test_a_schema_that_contains_itself_is_a_usage_error() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    schema["properties"]["self"] = schema
    with pytest.raises(UsageError, match="deeper than 255"):
        Toolset({"f": schema})


def test_the_deepest_schema_the_validator_reads_is_accepted() -> None:
    schema: dict[str, Any] = {"type": "integer"}
    for _ in range(127):  # two levels each: 254 with the leaf
        schema = {"type": "object", "properties": {"a": schema}}
    value: Any = 1
    for _ in range(127):
        value = {"a": value}
    assert Toolset({"f": schema}).validate(ToolCall(0, "c", "f", value)) == ToolCall(0, "c", "f", value)


def test_arguments_given_as_an_object_with_non_string_keys_are_invalid_json() -> None:
    # Only a payload made in Python can hold them; the validator would raise a ValueError.
    events = [
        {"type": "message_start", "message": {"id": "m", "usage": {}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t", "name": "f"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "u", "name": "f"}},
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}},
        {"type": "message_stop"},
    ]
    events[1]["content_block"]["input"] = {"a": {1: 2}}  # type: ignore[index]
    events[3]["content_block"]["input"] = {"a": {"b"}}  # type: ignore[index]
    tools = {"f": {"type": "object", "properties": {"a": {}}}}
    first, second = iter_tool_calls(events, "anthropic", tools=tools)
    assert isinstance(first, InvalidToolCall) and isinstance(second, InvalidToolCall)
    assert [(i.kind, i.message) for i in first.errors] == [
        ("invalid_json", "the arguments are not JSON: an object key is int 1, not a string")
    ]
    assert [(i.kind, i.message) for i in second.errors] == [
        ("invalid_json", "the arguments are not JSON: they hold a set ({'b'})")
    ]


def test_reporting_many_errors_lists_each_object_once() -> None:
    # Each error's position was found by listing its object's keys again, so the report grew
    # with the square of the errors (40,000 undeclared properties took 21 s). Counted, not timed.
    class Counted(dict[str, Any]):
        listed = 0

        def __iter__(self) -> Any:
            Counted.listed += 1
            return super().__iter__()

    value = Counted({f"k{i}": i for i in range(2_000)})
    toolset = Toolset({"f": {"type": "object", "properties": {"a": {}}}})
    result = toolset.validate(ToolCall(0, "c", "f", value))
    assert isinstance(result, InvalidToolCall) and len(result.errors) == 2_000
    assert [issue.path for issue in result.errors[:2]] == ["$.k0", "$.k1"]
    assert result.errors[-1].path == "$.k1999"
    assert Counted.listed <= 2
