"""Conversations in and out as files: exports (Markdown, JSON, text, a zip of several) and
imports (this app's export, ChatGPT, Claude, Open WebUI, LibreChat), their routes and the
demo that seeds a user through an import. Above conversations/: it reads and writes
conversations through their models and services; nothing of conversations/ imports it."""
