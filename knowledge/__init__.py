"""The user's knowledge base: documents, their sections and chunks, and retrieval."""
