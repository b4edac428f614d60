"""The knowledge base (TOML data files), shipped inside the package; see README.md beside this file."""
