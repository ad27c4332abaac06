"""Reading an export file line by line: each line decoded and held to its
kind's model (services/export_format.py) and to the characters the API
refuses anywhere (api/validation.py), a document's history verified, the
end line's counts compared. Messages name lines and fields, never quote
them."""

import json
from collections import Counter
from collections.abc import Iterable, Iterator

from memory_app.api.context import parse_input
from memory_app.api.validation import check_json_value
from memory_app.errors import InvalidInput
from memory_app.services.export import FORMAT, FORMAT_VERSION
from memory_app.services.export_format import LINES, DocumentLine
from memory_app.services.import_history import history_problem

# Version 1 files have no end line.
READABLE_VERSIONS = (1, FORMAT_VERSION)
MAX_ERRORS = 20


class Refused(Exception):
    """What is wrong with one line, said without quoting it."""


def _checked(line: object) -> dict:
    """One decoded line held to its kind's rules; Refused says why not."""
    if not isinstance(line, dict):
        raise Refused("not a JSON object")
    model = LINES.get(line.get("type"))
    if model is None:
        raise Refused("type: must be 'store', 'document' or 'end' after the header")
    try:
        check_json_value(line)
        parse_input(model, line)
    except InvalidInput as error:
        raise Refused(_fields(error)) from None
    if model is DocumentLine and (problem := history_problem(line)):
        raise Refused(problem)
    return line


def _fields(error: InvalidInput) -> str:
    fields = error.extra["fields"]
    return "; ".join(
        f"{name}: {message}" for name, messages in fields.items() for message in messages
    )


def _header_version(line: object) -> int:
    """The format version of a header line; Refused when it is none."""
    if (
        not isinstance(line, dict)
        or line.get("format") != FORMAT
        or line.get("format_version") not in READABLE_VERSIONS
    ):
        versions = " or ".join(map(str, READABLE_VERSIONS))
        raise Refused(f"not the header of a {FORMAT} file of version {versions}")
    return line["format_version"]


def _decoded(raw: str | bytes) -> object:
    """A line's JSON value, None for a blank line. Never quotes the line."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError as error:
        raise Refused(f"not UTF-8 (byte {error.start + 1} of the line)") from None
    if not text.strip():
        return None
    try:
        return json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise Refused("nested too deeply") from None
    except json.JSONDecodeError as error:
        raise Refused(f"not JSON ({error.msg} at character {error.pos + 1})") from None
    except ValueError:
        raise Refused("not JSON (NaN and Infinity are no JSON numbers)") from None


def _no_constant(name: str):
    """NaN and Infinity, which Python reads and JSON columns cannot hold."""
    raise ValueError(name)


def checked_lines(lines: Iterable[str | bytes]) -> Iterator[tuple[int, dict]]:
    """The file's store and document lines, checked; InvalidInput at the end
    naming every line at fault (up to MAX_ERRORS), if any."""
    errors: list[str] = []
    version = ended = 0
    counted: Counter = Counter()
    for number, raw in enumerate(lines, start=1):
        try:
            line = _decoded(raw)
            if line is None:
                continue
            if not version:
                version = _header_version(line)
                continue
            if ended:
                raise Refused(f"follows the end line (line {ended})")
            if isinstance(line, dict):
                # Counted as read, refused or not: the end line tells of lines lost.
                counted[line.get("type")] += 1
            line = _checked(line)
        except Refused as error:
            errors.append(f"line {number}: {error}")
            if not version or len(errors) >= MAX_ERRORS:
                break
            continue
        if line["type"] == "end":
            ended = number
            if (line["stores"], line["documents"]) != (counted["store"], counted["document"]):
                errors.append(
                    f"line {number}: the end line counts {line['stores']} stores and "
                    f"{line['documents']} documents, the file holds {counted['store']} and "
                    f"{counted['document']}: lines are missing"
                )
            continue
        yield number, line
    if not version and not errors:
        errors.append("the file is empty: it has no header line")
    elif version >= 2 and not ended and len(errors) < MAX_ERRORS:
        errors.append("the file ends before its end line: it was cut short")
    if errors:
        raise InvalidInput("The import was refused; nothing was written. " + "; ".join(errors))
