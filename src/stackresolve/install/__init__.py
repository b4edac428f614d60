"""`stackresolve install`: the plan's Python (python.py), what to install (target.py), a venv, uv or pip, and the
proof that it works (run.py, with the import check _importcheck.py run inside the new environment)."""
