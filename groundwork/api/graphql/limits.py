"""Bounds on what one GraphQL document may ask for, each refused with a stable `extensions.code`.

- depth: at most `MAX_DEPTH` nested selections (introspection fields are not counted, so tools load
  the schema) → `query_too_deep`;
- aliases: at most `MAX_ALIASES` aliased fields in a document → `too_many_aliases`;
- cost: at most `MAX_TOKENS` lexical tokens in a document (names, punctuation, values: what the parser
  and validator work through) → `query_too_costly`;
- selections: at most `MAX_SELECTIONS` fields in a document, and at most `MAX_REPEATS` fields answering to
  one name in one selection set → `query_too_costly`. Checked on the parsed document before validation:
  graphql-core's check that repeated fields can merge compares every pair, so a document under the token
  limit that repeats one field a thousand times cost seconds to validate before it was refused.

A refused document runs no resolver. The codes are given to the errors in `errors.CodedErrors`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from graphql import GraphQLError
from graphql.language import FieldNode, FragmentDefinitionNode, OperationDefinitionNode, SelectionSetNode
from strawberry.extensions import MaxAliasesLimiter, MaxTokensLimiter, QueryDepthLimiter, SchemaExtension
from strawberry.extensions.query_depth_limiter import IgnoreContext

MAX_DEPTH = 10
MAX_ALIASES = 30
MAX_TOKENS = 5000
MAX_SELECTIONS = 500
MAX_REPEATS = 10

# The messages graphql-core and Strawberry give each refusal, and the code each gets.
REFUSAL_CODES: tuple[tuple[str, str], ...] = (
    ("exceeds maximum operation depth", "query_too_deep"),
    ("aliases found. Allowed", "too_many_aliases"),
    ("Document contains more than", "query_too_costly"),
    ("fields: at most", "query_too_costly"),
)


def _introspection(context: IgnoreContext) -> bool:
    return context.field_name.startswith("__")


def _selection_sets(node: Any) -> Iterator[SelectionSetNode]:
    stack = [node.selection_set] if getattr(node, "selection_set", None) is not None else []
    while stack:
        selection_set = stack.pop()
        yield selection_set
        stack.extend(s.selection_set for s in selection_set.selections if getattr(s, "selection_set", None))


def selection_problem(document: Any) -> str | None:
    """Why a parsed document asks for too many fields, or None (a walk of the document: linear in its size)."""
    fields = 0
    for definition in document.definitions:
        if not isinstance(definition, OperationDefinitionNode | FragmentDefinitionNode):
            continue
        for selection_set in _selection_sets(definition):
            names = Counter((s.alias or s.name).value for s in selection_set.selections if isinstance(s, FieldNode))
            fields += sum(names.values())
            name, repeats = names.most_common(1)[0] if names else ("", 0)
            if repeats > MAX_REPEATS:
                return f"'{name}' is asked for {repeats} times in one selection; fields: at most {MAX_REPEATS} each"
            if fields > MAX_SELECTIONS:
                return f"the document asks for more than {MAX_SELECTIONS} fields: at most {MAX_SELECTIONS}"
    return None


class SelectionBudget(SchemaExtension):
    """Refuses a document asking for too many fields before graphql-core validates it."""

    def on_validate(self) -> Iterator[None]:  # type: ignore[override]
        """Check the parsed document first; a refusal takes the place of validation."""
        context = self.execution_context
        if context.graphql_document is not None and context.pre_execution_errors is None:
            problem = selection_problem(context.graphql_document)
            if problem is not None:
                context.pre_execution_errors = [GraphQLError(f"The document is too costly: {problem}.")]
        yield


def query_limits() -> list[Any]:
    """The Strawberry extensions that enforce the limits."""
    return [
        QueryDepthLimiter(max_depth=MAX_DEPTH, should_ignore=_introspection),
        MaxAliasesLimiter(max_alias_count=MAX_ALIASES),
        MaxTokensLimiter(max_token_count=MAX_TOKENS),
        SelectionBudget,
    ]


def refusal_code(message: str) -> str | None:
    """The code of a limit's refusal, from its message."""
    return next((code for marker, code in REFUSAL_CODES if marker in message), None)
