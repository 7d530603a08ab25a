"""ncu-roof: is each kernel memory-bound or compute-bound, at which tier, and how far below its roof?"""

__version__ = "0.1.0"
