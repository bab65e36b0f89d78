"""A query string under the policy: only the parameters the route declares, each once, integers written as
integers and booleans as `true` or `false` (the closed sets of filters are the services' rules)."""

from __future__ import annotations

import re
import types
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Annotated, Any, Union, get_args, get_origin
from urllib.parse import parse_qsl

from litestar.constants import RESERVED_KWARGS
from litestar.handlers import HTTPRouteHandler
from litestar.params import ParameterKwarg

from groundwork.api.input_policy.wording import KINDS
from groundwork.domain.errors import FieldError, InvalidRequest

_INTEGER = re.compile(r"-?[0-9]+")
# Past this many digits an integer is beyond every bound any parameter has.
_MAX_DIGITS = 18
_BOOLEAN = ("true", "false")


def _kind(annotation: Any) -> str:
    """The JSON kind a query parameter's annotation takes: integer, boolean or string."""
    if get_origin(annotation) is Annotated:
        return _kind(get_args(annotation)[0])
    if get_origin(annotation) in (Union, types.UnionType):
        kinds = {_kind(a) for a in get_args(annotation) if a is not type(None)}
        return kinds.pop() if len(kinds) == 1 else "string"
    if annotation is bool:
        return "boolean"
    if isinstance(annotation, type) and issubclass(annotation, int):
        return "integer"
    return "string"


@dataclass(frozen=True)
class QueryParameters:
    """The query parameters a route takes, by their wire names, with the JSON kind of each."""

    kinds: dict[str, str]

    @classmethod
    def of(cls, handler: HTTPRouteHandler, path_parameters: Iterable[str], also: Iterable[str] = ()) -> QueryParameters:
        """What `handler` declares (`also`: names it reads from the request itself, as strings)."""
        skip = set(RESERVED_KWARGS) | set(path_parameters) | set(handler.resolve_dependencies())
        kinds: dict[str, str] = dict.fromkeys(also, "string")
        for name, field in handler.parsed_fn_signature.parameters.items():
            kwarg = field.kwarg_definition
            if name in skip or (isinstance(kwarg, ParameterKwarg) and (kwarg.header or kwarg.cookie)):
                continue
            if kwarg is not None and not isinstance(kwarg, ParameterKwarg):
                continue  # a body or a dependency
            wire = kwarg.query if isinstance(kwarg, ParameterKwarg) and kwarg.query else name
            kinds[wire] = _kind(field.annotation)
        return cls(kinds)

    def check(self, query_string: bytes) -> None:
        """400 `invalid_request` naming every unknown, repeated or mistyped parameter."""
        if not query_string:
            return
        pairs = parse_qsl(query_string.decode("latin-1"), keep_blank_values=True)
        errors: list[FieldError] = []
        takes = ", ".join(self.kinds) if self.kinds else "none"
        for name, count in Counter(name for name, _ in pairs).items():
            kind = self.kinds.get(name)
            if kind is None:
                errors.append(FieldError(name[:100], f"is not a query parameter of this route (it takes {takes})"))
            elif count > 1:
                errors.append(FieldError(name, "is given more than once; give it once"))
        for name, value in pairs:
            kind = self.kinds.get(name)
            if kind == "integer" and not _INTEGER.fullmatch(value):
                errors.append(FieldError(name, f"must be {KINDS['integer']}"))
            elif kind == "integer" and len(value.lstrip("-")) > _MAX_DIGITS:
                errors.append(FieldError(name, "is out of range"))
            elif kind == "boolean" and value not in _BOOLEAN:
                errors.append(FieldError(name, f"must be {KINDS['boolean']}"))
        if errors:
            raise InvalidRequest("The query string is not valid.", errors[:20])
