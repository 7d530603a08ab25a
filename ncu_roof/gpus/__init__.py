"""GPU facts and roofs."""
