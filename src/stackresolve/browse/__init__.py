"""The knowledge base, browsable: `matrix` (every release line resolved) and `gpus` / `show` (records
with their sources). The static page (stackresolve.site) reads the matrix rows."""
