"""Korean for heavy work on the tasks framework (issue 59): an upload's indexing progress,
the task workers in the admin."""

KO = {
    "Indexing… %(percent)s%%": "색인 중… %(percent)s%%",
    "Background work": "백그라운드 작업",
}
