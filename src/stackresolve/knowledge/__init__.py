"""The knowledge base: typed records loaded and validated from constraints/*.toml."""
