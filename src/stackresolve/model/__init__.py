"""The typed values every layer shares: enums, findings, the request's GPU targets and the resolved stack.

Nothing here does I/O or knows the knowledge base; the resolver builds these values once and every renderer,
`check`, `doctor` and `explain` only reads them."""
