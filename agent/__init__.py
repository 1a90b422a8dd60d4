"""The LangGraph agent: memory, tools, streaming. Never imports Django."""
