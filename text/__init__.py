"""Text that every app reads the same way: words and their forms, scoring, language,
sensitive information. Pure Python, no Django: `agent`, `knowledge`, `memories` and
`conversations` import down into it, never the reverse."""
