"""The roofline, verdicts, notes, groups."""
