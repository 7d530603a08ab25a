"""`ncu-roof profile`: build the ncu command, run it safely, follow its progress, diagnose failures:
`progress` (what ncu is asked and says, the known failures) and `run` (the only code that starts
ncu). Showing the progress is the CLI's (`ncu_roof.cli.profile`)."""
