"""The page's pure views: state in, escaped HTML out.

Modules: `safe_html` (escaping, formatters, verdict sources in words),
`run_view` (a live run: its cells and counters, the model the views render),
`grid_view` (cell slots, the grid, the progress line), `scoreboard_view`,
`plot_view` (with `plot_labels`: label placement inside the plot area),
`compare_view`, and `style` (the page's CSS).

May import: the packages below the UI (`types`, `verdicts`, `scoring`, `compare`,
`asking`) and each other. Never Gradio, the engine, or the rest of the UI
(`state`, `handlers`, the page).
"""
