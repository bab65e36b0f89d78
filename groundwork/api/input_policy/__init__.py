"""The strict input policy every transport applies (DESIGN.md "Wire format"), written once here.

- A boolean is a JSON boolean, an integer a JSON integer: no strings, no floats, no `1` for `true`.
  `confirm` confirms only as the JSON boolean `true` (false or absent: the service's 422
  `confirmation_required`); any other value is 400 `invalid_request`.
- Unknown body fields, unknown query parameters and unknown MCP tool arguments are 400
  `invalid_request`, each named in `errors[]`.
- A body is `application/json` (else 415 `unsupported_media_type`); malformed JSON is 400 with its
  line, column and byte. An empty body is the empty object.
- Messages name the field as the caller wrote it and say what is accepted; none carries a Python type,
  class or repr (`wording`).

Values outside a closed set (a list filter's `status`, `state`, `type`, ...) are rules of the services
(`groundwork.domain.choices`), so every transport answers them alike: 422 `validation_failed`.

Who applies it: `middleware` for the Litestar apps (REST, the Agent API, the internal API), the GraphQL
controller for its request body and query string (GraphQL's own type system refuses wrong argument
types), `tool_arguments` for every MCP tool.
"""
