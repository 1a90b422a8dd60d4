"""The one validation layer: field types every input goes through (API, websocket, import).

Each type refuses, at the edge, what a row cannot hold: NUL and lone surrogates
(PostgreSQL text and jsonb, Redis encoders), times outside what PostgreSQL stores once
converted to UTC, non-finite numbers (jsonb), and JSON nested deeper than anything we
write. `loads` reads JSON text with the same rules, so a body never reaches a schema
with `Infinity` in it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Mapping
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop
from ninja import Schema
from pydantic import AfterValidator, BeforeValidator, ConfigDict, Field, ValidationError

MAX_JSON_DEPTH = 32


def storable_text(value: str) -> str:
    """Return `value` if a text column can hold it; else raise ValueError."""
    if "\x00" in value:
        raise ValueError("must not contain NUL characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("must be valid Unicode text (no lone surrogates)") from None
    return value


def utc_time(value: datetime) -> datetime:
    """Return `value` in UTC (naive means UTC); refuse times PostgreSQL cannot store."""
    try:
        value = (value if value.tzinfo else value.replace(tzinfo=UTC)).astimezone(UTC)
    except (OverflowError, ValueError):
        raise ValueError("time out of range (years 1 to 9999, in UTC)") from None
    return value


def written_time(value: Any) -> Any:
    """Refuse a number where a time is written out: pydantic reads 123 or "123" as seconds
    since 1970, so a wrong value in an import became a date in January 1970."""
    if isinstance(value, bool | int | float) or (
        isinstance(value, str) and value.strip().lstrip("+-").replace(".", "", 1).isdigit()
    ):
        raise ValueError(_("a date and time expected (ISO 8601)"))
    return value


def no_bool(value: Any) -> Any:
    """Refuse true/false where a number is meant (pydantic takes true as 1)."""
    if isinstance(value, bool):
        raise ValueError(_("a whole number expected"))
    return value


def storable_json(value: Any, _depth: int = 0) -> Any:
    """Return a JSON value if jsonb can hold it: finite numbers, storable text, bounded depth."""
    if _depth > MAX_JSON_DEPTH:
        raise ValueError(f"nested deeper than {MAX_JSON_DEPTH} levels")
    if isinstance(value, str):
        storable_text(value)
    elif isinstance(value, float) and not math.isfinite(value):
        raise ValueError("numbers must be finite")
    elif isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 2**63:
        raise ValueError("integers must fit in 64 bits")
    elif isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValueError("object keys must be strings")
            storable_text(key)
            storable_json(item, _depth + 1)
    elif isinstance(value, list):
        for item in value:
            storable_json(item, _depth + 1)
    elif value is not None and not isinstance(value, bool | int | float):
        raise ValueError("must be a JSON value")
    return value


def _collapse_whitespace(value: Any) -> Any:
    return " ".join(value.split()) if isinstance(value, str) else value


def one_line(*, max_length: int, min_length: int = 0) -> Any:
    """Return the type of a one-line text field (a title, a name): runs of whitespace,
    newlines included, become one space, then its length is checked."""
    return Annotated[
        str,
        Field(min_length=min_length, max_length=max_length),
        AfterValidator(storable_text),
        BeforeValidator(_collapse_whitespace),
    ]


Text = Annotated[str, AfterValidator(storable_text)]
# A model's id as GET /models lists it (a conversation's, a reply's, a user's default).
MODEL_ID_MAX_LENGTH = 100
ModelId = Annotated[
    str,
    Field(
        max_length=MODEL_ID_MAX_LENGTH, description="an id GET /models lists; blank: the default"
    ),
    AfterValidator(storable_text),
    BeforeValidator(lambda value: value.strip() if isinstance(value, str) else value),
]
# A conversation's own instructions, a user's custom instructions, a preset's.
INSTRUCTIONS_MAX_CHARS = 8000
Instructions = Annotated[Text, Field(max_length=INSTRUCTIONS_MAX_CHARS)]
# A model's sampling temperature (null where it is optional: the model's default).
Temperature = Annotated[float, Field(ge=0, le=2, allow_inf_nan=False, strict=True)]
Time = Annotated[datetime, AfterValidator(utc_time), BeforeValidator(written_time)]
# A file format's version (`Literal[1]` alone takes true for 1).
FormatVersion = Annotated[Literal[1], BeforeValidator(no_bool)]
Json = Annotated[Any, AfterValidator(storable_json)]
JsonObject = Annotated[dict[str, Any], AfterValidator(storable_json)]


class Input(Schema):
    """An input shape: unknown fields are refused (422), never silently dropped."""

    model_config = ConfigDict(extra="forbid")


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed in JSON")


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"{text[:20]} is out of range")
    return number


class TooDeep(ValueError):
    """JSON nested deeper than Python's parser goes (it recurses once per level)."""


def loads(raw: str | bytes) -> Any:
    """Parse JSON text, refusing NaN, Infinity, out-of-range numbers and deep nesting.

    Raises ValueError for all of them (TooDeep, one, for a RecursionError).
    """
    try:
        return json.loads(raw, parse_constant=_refuse_constant, parse_float=_finite_float)
    except RecursionError:
        raise TooDeep(_("JSON nested too deeply")) from None


class ErrorBody(Schema):
    code: str
    message: str


class ErrorOut(Schema):
    """SPEC's error shape, every API answer that is not a success: {"error": {code, message}}."""

    error: ErrorBody


# pydantic's own sentences are English and speak of its internals ("Input should be a valid
# integer, unable to parse string as an integer"); a person reads these, in their language.
# A type not here keeps pydantic's words; a validator's own message (value_error) is ours.
_SAID: dict[str, str] = {
    "missing": gettext_noop("required"),
    "extra_forbidden": gettext_noop("not a field this takes"),
    "string_too_long": gettext_noop("at most %(max_length)s characters"),
    "string_too_short": gettext_noop("at least %(min_length)s characters"),
    "less_than_equal": gettext_noop("at most %(le)s"),
    "greater_than_equal": gettext_noop("at least %(ge)s"),
    "less_than": gettext_noop("less than %(lt)s"),
    "greater_than": gettext_noop("more than %(gt)s"),
    "string_pattern_mismatch": gettext_noop("not in the form this takes"),
    "literal_error": gettext_noop("one of %(expected)s"),
    "enum": gettext_noop("one of %(expected)s"),
    "string_type": gettext_noop("text expected"),
    "int_type": gettext_noop("a whole number expected"),
    "int_parsing": gettext_noop("a whole number expected"),
    "int_from_float": gettext_noop("a whole number expected"),
    "float_type": gettext_noop("a number expected"),
    "float_parsing": gettext_noop("a number expected"),
    "finite_number": gettext_noop("a number expected"),
    "bool_type": gettext_noop("true or false expected"),
    "bool_parsing": gettext_noop("true or false expected"),
    "uuid_type": gettext_noop("an id expected"),
    "uuid_parsing": gettext_noop("an id expected"),
    "datetime_type": gettext_noop("a date and time expected (ISO 8601)"),
    "datetime_parsing": gettext_noop("a date and time expected (ISO 8601)"),
    "datetime_from_date_parsing": gettext_noop("a date and time expected (ISO 8601)"),
    "date_type": gettext_noop("a date expected (YYYY-MM-DD)"),
    "date_parsing": gettext_noop("a date expected (YYYY-MM-DD)"),
    "date_from_datetime_parsing": gettext_noop("a date expected (YYYY-MM-DD)"),
    "dict_type": gettext_noop("an object expected"),
    "model_type": gettext_noop("an object expected"),
    "model_attributes_type": gettext_noop("an object expected"),
    "list_type": gettext_noop("a list expected"),
    "json_invalid": gettext_noop("not valid JSON"),
}
_COLLECTIONS = {"List", "Tuple", "Set", "Frozenset", "Dictionary"}


def _problem(error: Mapping[str, Any]) -> str:
    kind, context = error.get("type"), error.get("ctx") or {}
    if kind == "too_long":  # a string checked after a validator is "Value", not "String"
        if context.get("field_type") in _COLLECTIONS:
            return _("at most %(max_length)s items") % context
        kind = "string_too_long"
    said = _SAID.get(str(kind))
    if said is not None:
        try:
            return _(said) % context if "%(" in said else _(said)
        except (KeyError, TypeError, ValueError):
            pass  # a context without the figure: pydantic's own words
    return str(error.get("msg") or _("Invalid input.")).removeprefix("Value error, ")


def describe_error(error: Mapping[str, Any], *, skip: Collection[Any] = ()) -> str:
    """Say in one line what one of pydantic's errors found: "field.path: problem" (the path
    without the `skip` parts), the problem in the reader's language where pydantic's own
    words would be English (`_SAID`). Every input checked by a schema is refused in these
    words."""
    where = ".".join(str(part) for part in error.get("loc", ()) if part not in skip)
    problem = _problem(error)
    return _("%(field)s: %(problem)s") % {"field": where, "problem": problem} if where else problem


def first_error(exc: ValidationError, *, skip: Collection[Any] = ()) -> str:
    """Say in one line what is wrong with an input pydantic refused: its first error."""
    return describe_error(exc.errors()[0], skip=skip)


def errors(*statuses: int) -> dict[int, type[ErrorOut]]:
    """The `response=` entries of an endpoint's error answers."""
    return {status: ErrorOut for status in statuses}
