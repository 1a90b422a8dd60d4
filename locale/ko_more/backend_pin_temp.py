"""Korean for pinned and temporary conversations (model fields, shown in the admin)."""

KO = {"pinned": "고정됨", "temporary": "임시"}
