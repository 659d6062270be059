"""orbench-play: watch language models over-refuse, side by side, on OR-Bench."""

__version__ = "0.1.0"
