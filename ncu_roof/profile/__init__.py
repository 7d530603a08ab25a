"""`ncu-roof profile`: build the ncu command, run it safely, follow its progress, diagnose failures.

The parts, one module each: `argv` (what to run), `progress` (what ncu's output says),
`diagnosis` (the one table of known failures), `publish` (the target, the private folder, the
report check and the rename) and `run` (the only code that starts ncu). Showing the progress is
the CLI's (`ncu_roof.cli.progress`).
"""
