"""`ncu-roof profile`: build the ncu command, run it safely, follow its progress, diagnose failures.

The parts: `progress` (what ncu is asked, what its output says, and the one table of known
failures) and `run` (the only code that starts ncu; the program and the target checked, the
private folder, the report check and the rename). Showing the progress is the CLI's (`ncu_roof.cli.profile`).
"""
