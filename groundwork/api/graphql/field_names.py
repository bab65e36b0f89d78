"""A field as a GraphQL caller wrote it: the services name fields as REST does (`expected_target_version`,
`limit`); GraphQL spells them in camelCase and pages with `first` and `after`."""

from __future__ import annotations

import re
from typing import Any

_PAGING = {"limit": "first", "cursor": "after"}
_SEGMENT = re.compile(r"[^.\[\]]+|\[\d+\]")


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def graphql_path(path: str) -> str:
    """`expected_target_version` -> `expectedTargetVersion`, `subject_ref.id` -> `subjectRef.id`, `limit` -> `first`."""
    segments = _SEGMENT.findall(path)
    named = [s if s.startswith("[") else _PAGING.get(s, _camel(s)) for s in segments]
    return "".join(s if s.startswith("[") or i == 0 else "." + s for i, s in enumerate(named))


def graphql_field_errors(extra: dict[str, Any]) -> dict[str, Any]:
    """An error's extra members with the paths of its `errors[]` in GraphQL's names."""
    errors = extra.get("errors")
    if not isinstance(errors, list):
        return extra
    renamed = [{**e, "path": graphql_path(str(e.get("path", "")))} if isinstance(e, dict) else e for e in errors]
    return {**extra, "errors": renamed}
