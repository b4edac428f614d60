"""What is done with a lock: full locks made by uv from a pip plan (full) and `check` comparing a machine
with a lock (check). The lock document itself is a format: formats.lock_render writes it,
formats.lock_read reads it."""
