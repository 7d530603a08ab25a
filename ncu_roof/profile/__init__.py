"""`ncu-roof profile`: build the ncu command, run it safely, follow its progress, diagnose failures.

The parts, one module each: `argv` (what to run), `progress` (what ncu's output says, and the one
table of known failures) and `run` (the only code that starts ncu; the target, the private folder,
the report check and the rename). Showing the progress is the CLI's (`ncu_roof.cli.profile`).
"""
