"""The loop around the pillars, lowest first: results, content and provider message shapes (`results`, `content`,
`messages`), the one pipeline a call runs through (`pipeline`), concurrent batches (`batches`), tools and toolboxes
(`tools`), streamed responses (`stream`), and answering a model's turn (`turn`: `run_tool_calls`).

Empty on purpose: `funccall/__init__.py` is the public face."""
