"""The command line: ``crawl`` (``main``), its frontier half (``frontier``).

The top layer of ``shared``: it picks a stage by name and runs it, starts
the bundled test site when no root is given, and prints the report.  With
the benchmark, it is the only part of ``shared`` that imports a stage.
"""
