"""Tool definitions, as the caller sends them to the provider, read as (name, JSON Schema).

An OpenAI Responses custom tool (``{"type": "custom", "name", "format"}``) takes free text, not
JSON: it is read as (name, ``TextFormat``), its grammar kept for the validator to check.

Eight formats (OpenAI Chat and Responses, Anthropic, Gemini, Cohere, Mistral, Ollama, Bedrock),
mixed freely, a plain mapping of name to JSON Schema, or pydantic model classes. Gemini's
OpenAPI-style ``Schema`` is turned into JSON Schema, and its built-in tools (``googleSearch``,
``codeExecution``…) offer no function. A definition in no known format, a missing
name or a schema nested too deep is a ``UsageError`` naming where it was. pydantic is never
imported: a model class is recognised by its ``model_json_schema`` method. Compiling and
checking the schemas is the validator's job (``_validate``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

from ._errors import UsageError
from ._types import JSONObject

__all__ = ("MAX_SCHEMA_DEPTH", "Definition", "TextFormat", "definitions", "one_definition")


@dataclass(frozen=True, slots=True)
class TextFormat:
    """A custom tool's input: any text (``syntax`` ``None``), or a sentence of a ``"regex"`` or
    ``"lark"`` grammar given by ``definition``."""

    syntax: str | None = None
    definition: str = ""


Definition: TypeAlias = JSONObject | TextFormat | None
"""What a tool takes: a JSON Schema, free text, or ``None`` for a provider-defined tool."""

#: The grammar syntaxes a custom tool's format may declare.
_SYNTAXES = ("lark", "regex")

# A tool with no parameters: any provider lets the model call it with an empty object.
_NO_PARAMETERS: JSONObject = {"type": "object", "properties": {}}

# Gemini's built-in tools, which the model does not call by name (no ``functionCall`` part): a
# tool object holding only these offers no function. Computer use is not among them: the model
# calls its actions by name, which streamkit cannot know.
_GEMINI_BUILTINS = frozenset(
    spelling
    for camel, snake in (
        ("googleSearch", "google_search"),
        ("googleSearchRetrieval", "google_search_retrieval"),
        ("retrieval", "retrieval"),
        ("codeExecution", "code_execution"),
        ("urlContext", "url_context"),
        ("fileSearch", "file_search"),
        ("googleMaps", "google_maps"),
        ("enterpriseWebSearch", "enterprise_web_search"),
        ("parallelAiSearch", "parallel_ai_search"),
        ("exaAiSearch", "exa_ai_search"),
    )
    for spelling in (camel, snake)
)

# Keys of a single tool definition (or of a Gemini tool object): a mapping with one of them and
# a value that is no schema was meant as a list of one.
_DEFINITION_KEYS = frozenset(
    ("input_schema", "function", "toolSpec", "functionDeclarations", "function_declarations", "parameters")
)


def definitions(tools: Any) -> Iterable[tuple[str, str, Definition]]:
    """(where, name, schema) for each tool; schema ``None`` for a provider-defined tool."""
    if isinstance(tools, Mapping):
        if _DEFINITION_KEYS & tools.keys() and not all(isinstance(v, Mapping) for v in tools.values()):
            raise UsageError(
                f"tools looks like one tool definition (keys {sorted(map(str, tools))}); "
                "pass a list of definitions, or a mapping of tool name to JSON Schema"
            )
        for name, schema in tools.items():
            where = f"tools[{name!r}]"
            if not isinstance(name, str) or not name:
                raise UsageError(f"{where}: a tool name must be a non-empty string")
            yield where, name, _schema_object(where, schema)
        return
    if isinstance(tools, str | bytes) or not isinstance(tools, Iterable):
        raise UsageError(
            f"tools must be a list of tool definitions or a mapping of name to JSON Schema, got {type(tools).__name__}"
        )
    for position, tool in enumerate(tools):
        yield from one_definition(f"tools[{position}]", tool)


def one_definition(where: str, tool: Any) -> Iterable[tuple[str, str, Definition]]:
    """(where, name, schema) of each tool one definition holds (a Gemini tool holds several)."""
    model_schema = getattr(tool, "model_json_schema", None) if isinstance(tool, type) else None
    if callable(model_schema):  # a pydantic model class: the tool is named after the class
        yield where, tool.__name__, _schema_object(where, model_schema())
        return
    if not isinstance(tool, Mapping):
        raise UsageError(f"{where}: a tool definition must be an object or a pydantic model class, got {tool!r:.80}")
    declarations = tool.get("functionDeclarations", tool.get("function_declarations"))
    if declarations is not None:  # Gemini: {"functionDeclarations": [...]}, other keys are built-in tools
        key = "functionDeclarations" if "functionDeclarations" in tool else "function_declarations"
        if not isinstance(declarations, list):
            raise UsageError(f"{where}.{key} must be a list")
        for position, declaration in enumerate(declarations):
            yield _gemini_declaration(f"{where}.{key}[{position}]", declaration)
        return
    if tool and _GEMINI_BUILTINS.issuperset(tool):  # Gemini: {"googleSearch": {}}, no function in it
        return
    if "toolSpec" in tool:  # Bedrock Converse: {"toolSpec": {"name", "inputSchema": {"json": {...}}}}
        spec = tool["toolSpec"]
        input_schema = spec.get("inputSchema") if isinstance(spec, Mapping) else None
        if not isinstance(input_schema, Mapping) or "json" not in input_schema:
            raise UsageError(f"{where}.toolSpec.inputSchema.json is missing")
        name = _name(f"{where}.toolSpec", spec.get("name"))
        yield where, name, _schema_object(f"{where}.toolSpec.inputSchema.json", input_schema["json"])
        return
    if "cachePoint" in tool and len(tool) == 1:
        return  # Bedrock: a cache marker between tool specs, not a tool
    if "parameter_definitions" in tool:
        raise UsageError(f"{where}: Cohere v1 parameter_definitions are not supported; give the Cohere v2 tool form")
    kind = tool.get("type")
    if kind == "function" and "function" in tool:  # OpenAI Chat, Cohere v2, Mistral, Ollama
        function = tool["function"]
        if not isinstance(function, Mapping):
            raise UsageError(f"{where}.function must be an object")
        name = _name(f"{where}.function", function.get("name"))
        yield where, name, _parameters(f"{where}.function.parameters", function.get("parameters"))
    elif kind == "function":  # OpenAI Responses: {"type": "function", "name", "parameters"}
        yield where, _name(where, tool.get("name")), _parameters(f"{where}.parameters", tool.get("parameters"))
    elif "input_schema" in tool:  # Anthropic: {"name", "input_schema"} (type absent or "custom")
        yield where, _name(where, tool.get("name")), _schema_object(f"{where}.input_schema", tool["input_schema"])
    elif kind == "custom" and "input_schema" not in tool:  # OpenAI Responses: free text, maybe a grammar
        yield where, _name(where, tool.get("name")), _text_format(f"{where}.format", tool.get("format"))
    elif "name" in tool and ("parameters" in tool or "parametersJsonSchema" in tool) and kind is None:
        yield _gemini_declaration(where, tool)  # a bare Gemini function declaration
    elif isinstance(kind, str) and kind != "function":
        # A provider-defined tool (Anthropic's bash or web_search, OpenAI's web_search): the
        # provider owns its input, so calls to it are accepted unchecked.
        builtin = tool.get("name")
        if isinstance(builtin, str) and builtin:
            yield where, builtin, None
    else:
        raise UsageError(
            f"{where}: not a tool definition in a known format (OpenAI, Anthropic, Gemini, Cohere, "
            f"Mistral, Ollama, Bedrock); its keys are {sorted(map(str, tool))}"
        )


def _text_format(where: str, format_: Any) -> TextFormat:
    """A custom tool's ``format``: ``{"type": "text"}`` (or none), or ``{"type": "grammar",
    "syntax": "lark" | "regex", "definition": ...}``."""
    if format_ is None:
        return TextFormat()
    kind = format_.get("type") if isinstance(format_, Mapping) else None
    if kind == "text":
        return TextFormat()
    if kind != "grammar":
        raise UsageError(f'{where} must be {{"type": "text"}} or {{"type": "grammar", ...}}, got {format_!r:.80}')
    assert isinstance(format_, Mapping)
    syntax, definition = format_.get("syntax"), format_.get("definition")
    if syntax not in _SYNTAXES:
        raise UsageError(f'{where}.syntax must be "lark" or "regex", got {syntax!r}')
    if not isinstance(definition, str) or not definition:
        raise UsageError(f"{where}.definition must be the grammar as a non-empty string, got {definition!r:.80}")
    return TextFormat(syntax, definition)


def _name(where: str, name: Any) -> str:
    if not isinstance(name, str) or not name:
        raise UsageError(f"{where}.name must be a non-empty string, got {name!r}")
    return name


def _parameters(where: str, schema: Any) -> JSONObject:
    return dict(_NO_PARAMETERS) if schema is None else _schema_object(where, schema)


def _schema_object(where: str, schema: Any) -> JSONObject:
    if not isinstance(schema, Mapping):
        raise UsageError(f"{where}: a JSON Schema object was expected, got {type(schema).__name__}")
    _check_depth(where, schema)
    return dict(schema)


#: The deepest nesting of objects and arrays in a schema: the validator reads no deeper, and the
#: schema is walked by recursion (closing objects, reading Gemini's form) only this deep.
MAX_SCHEMA_DEPTH = 255


def _check_depth(where: str, schema: Mapping[str, Any]) -> None:
    """A schema nested deeper than ``MAX_SCHEMA_DEPTH`` is refused, by one walk without recursion
    (which also stops a schema that contains itself)."""
    level: list[Any] = [schema]
    depth = 0
    while level:
        depth += 1
        if depth > MAX_SCHEMA_DEPTH:
            raise UsageError(f"{where}: the schema nests objects and arrays deeper than {MAX_SCHEMA_DEPTH} levels")
        below: dict[int, Any] = {}  # by identity: a part shared many times is walked once per level
        for node in level:
            for child in node.values() if isinstance(node, Mapping) else node:
                if isinstance(child, Mapping | list):
                    below[id(child)] = child
        level = list(below.values())


def _gemini_declaration(where: str, declaration: Any) -> tuple[str, str, JSONObject]:
    if not isinstance(declaration, Mapping):
        raise UsageError(f"{where}: a function declaration must be an object")
    name = _name(where, declaration.get("name"))
    for key in ("parametersJsonSchema", "parameters_json_schema"):
        if declaration.get(key) is not None:  # plain JSON Schema
            return where, name, _schema_object(f"{where}.{key}", declaration[key])
    for key in ("parameters", "parameters_json_schema"):
        if declaration.get(key) is not None:  # Gemini's OpenAPI subset: uppercase types, "nullable"
            schema = declaration[key]
            if isinstance(schema, Mapping):
                _check_depth(f"{where}.{key}", schema)
            return where, name, _from_openapi(f"{where}.{key}", schema)
    return where, name, dict(_NO_PARAMETERS)


# Gemini's Schema fields that differ from JSON Schema, and the int64 fields its REST encoding
# may send as strings ("maxItems": "3").
_GEMINI_KEYS = {
    "any_of": "anyOf",
    "max_items": "maxItems",
    "min_items": "minItems",
    "max_length": "maxLength",
    "min_length": "minLength",
    "max_properties": "maxProperties",
    "min_properties": "minProperties",
    "property_ordering": "propertyOrdering",
}
_GEMINI_INTEGERS = frozenset(("maxItems", "minItems", "maxLength", "minLength", "maxProperties", "minProperties"))


def _from_openapi(where: str, schema: Any) -> JSONObject:
    """Gemini's OpenAPI-style ``Schema`` as JSON Schema: ``OBJECT`` -> ``object``, ``nullable``."""
    if not isinstance(schema, Mapping):
        raise UsageError(f"{where}: a schema object was expected, got {type(schema).__name__}")
    out: JSONObject = {}
    for raw_key, value in schema.items():
        key = str(raw_key)
        key = _GEMINI_KEYS.get(key, key)
        if key == "type" and isinstance(value, str):
            value = value.lower()
            if value == "type_unspecified":
                continue
        elif key == "properties" and isinstance(value, Mapping):
            value = {name: _from_openapi(f"{where}.properties.{name}", sub) for name, sub in value.items()}
        elif key == "items":
            value = _from_openapi(f"{where}.items", value)
        elif key == "anyOf" and isinstance(value, list):
            value = [_from_openapi(f"{where}.anyOf[{i}]", sub) for i, sub in enumerate(value)]
        elif key in _GEMINI_INTEGERS and isinstance(value, str) and value.isdigit():
            value = int(value)
        elif key in ("nullable", "propertyOrdering", "example"):
            continue  # not JSON Schema; "nullable" is applied below
        out[key] = value
    if schema.get("nullable") is True and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
    return out
