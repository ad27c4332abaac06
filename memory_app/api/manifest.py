"""`GET /api/v1/tools`: the tool definitions, ready to hand to an LLM."""

from functools import cache

from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from pydantic import BaseModel
from rest_framework import serializers
from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.response import Response

from memory_app.api.catalog import ALL_TOOL_VIEWS
from memory_app.errors import InvalidInput


def _inline_defs(model: type[BaseModel]) -> dict:
    """The model's JSON Schema with $defs inlined: function-calling APIs
    want one self-contained object schema per tool."""
    schema = model.model_json_schema()
    defs = schema.pop("$defs", {})

    def resolve(node):
        if isinstance(node, dict):
            if "$ref" in node:
                return resolve(defs[node["$ref"].rsplit("/", 1)[-1]])
            # Drop pydantic's "title" annotations (strings), never a property
            # named "title" (memory_remember's and memory_patch's).
            return {
                key: resolve(value)
                for key, value in node.items()
                if not (key == "title" and isinstance(value, str))
            }
        if isinstance(node, list):
            return [resolve(item) for item in node]
        return node

    return resolve(schema)


# Function-calling APIs take a plain object schema per tool: Anthropic's
# refuses a tool list in which any input schema has one of these at its top,
# and strict modes elsewhere do too. The rules they state across fields ("id
# or store and path", "content or edits") stay in each tool's description,
# the OpenAPI document and the server's own check (400).
TOP_LEVEL_COMBINATORS = ("anyOf", "allOf", "oneOf")


def _function_schema(model: type[BaseModel]) -> dict:
    schema = _inline_defs(model)
    for keyword in TOP_LEVEL_COMBINATORS:
        schema.pop(keyword, None)
    return schema


@cache
def tool_definitions() -> tuple[dict, ...]:
    return tuple(
        {
            "name": view.name,
            "description": view.description,
            "write": view.write,
            "input_schema": _function_schema(view.input_model),
        }
        for view in ALL_TOOL_VIEWS
    )


def wants_write_tools(params) -> bool:
    """`include_write_tools` as the manifest and /mcp read it: true or false
    in any case, absent for false; anything else is a 400."""
    raw = params.get("include_write_tools", "false").lower()
    if raw not in {"true", "false"}:
        raise InvalidInput(
            "include_write_tools is true or false.",
            fields={"include_write_tools": ["true or false"]},
        )
    return raw == "true"


@extend_schema(
    operation_id="tools_manifest",
    summary="The tool manifest",
    parameters=[
        OpenApiParameter("include_write_tools", bool, description="Also list write tools.")
    ],
    responses=inline_serializer(
        "ToolManifest",
        {"tools": serializers.ListField(child=serializers.DictField())},
    ),
    tags=["tools"],
)
@api_view(["GET", "HEAD"])
def tools_manifest(request: Request) -> Response:
    include_write = wants_write_tools(request.query_params)
    tools = [tool for tool in tool_definitions() if include_write or not tool["write"]]
    return Response({"tools": tools})
