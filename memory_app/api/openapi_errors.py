"""What every API operation shares, added to the OpenAPI document.

Some rules live in layers every endpoint shares rather than in the view:
the input middleware and parser (400, 413; no control characters in any
text), authentication (401), the On-Behalf-Of check (403), routing
(404, 405) and the throttles (429). Declaring them once here keeps the
document true for every operation, including ones added later.
"""

from memory_app.api.validation import TEXT_PATTERN

ERROR_SCHEMA = {"$ref": "#/components/schemas/ErrorOut"}
SHARED = {
    "400": (
        "invalid_input: a bad header, query parameter or body, or a body that is not "
        "Content-Type: application/json; `fields` names it"
    ),
    "401": "not_authenticated",
    "403": "permission_denied (including X-Memory-On-Behalf-Of without the right)",
    "404": "not_found",
    "405": "method_not_allowed",
    "429": "rate_limited; wait `Retry-After` seconds",
}
WITH_BODY = {
    "413": "too_large: the body is over the size limit",
}
RETRY_AFTER = {
    "Retry-After": {
        "schema": {"type": "integer", "minimum": 1},
        "description": "Seconds to wait before trying again.",
    }
}


def _error(description: str) -> dict:
    return {"description": description, "content": {"application/json": {"schema": ERROR_SCHEMA}}}


def _restrict_text(node) -> None:
    """Give every free-text string schema the pattern the input layer enforces."""
    if isinstance(node, list):
        for item in node:
            _restrict_text(item)
        return
    if not isinstance(node, dict):
        return
    free_text = not ({"pattern", "format", "enum", "const"} & node.keys())
    if node.get("type") == "string" and free_text:
        node["pattern"] = TEXT_PATTERN
    for value in node.values():
        _restrict_text(value)


def _accepts_empty_object(schema: dict, components: dict) -> bool:
    if "$ref" in schema:
        schema = components.get(schema["$ref"].rsplit("/", 1)[-1], {})
    return not (schema.get("required") or {"anyOf", "oneOf", "allOf"} & schema.keys())


def add_shared_error_responses(result, generator, request, public):
    """drf-spectacular post-processing hook (SPECTACULAR_SETTINGS)."""
    components = result.get("components", {}).get("schemas", {})
    for path, operations in result.get("paths", {}).items():
        if not path.startswith("/api/"):
            continue
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            body = operation.get("requestBody")
            shared = {**SHARED, **(WITH_BODY if body else {})}
            for code, description in shared.items():
                responses.setdefault(code, _error(description))
            responses["429"].setdefault("headers", RETRY_AFTER)
            if body:
                # A missing body reads as {}: required exactly when {} is refused.
                schema = body["content"]["application/json"]["schema"]
                body["required"] = not _accepts_empty_object(schema, components)
            _restrict_text(operation.get("parameters", []))
    for name, schema in components.items():
        if name.endswith("In"):
            _restrict_text(schema)
    return result
