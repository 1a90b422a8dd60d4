# ruff: noqa: E501
"""Korean for large imports, read by a worker (transfers/import_jobs.py, static/js/list.js)."""

KO = {
    "Importing": "가져오는 중",
    "Importing %(name)s… A large file takes a while; you may leave this page.": "%(name)s 가져오는 중… 큰 파일이라 시간이 걸립니다. 이 페이지를 떠나도 됩니다.",
    "An import of yours is still running; try again when it ends.": "진행 중인 가져오기가 있습니다. 끝난 뒤에 다시 시도하세요.",
    "The import was interrupted. Try again.": "가져오기가 중단되었습니다. 다시 시도하세요.",
    "The import could not be finished. Try again later.": "가져오기를 마치지 못했습니다. 나중에 다시 시도하세요.",
    "No such import.": "그런 가져오기가 없습니다.",
}  # fmt: skip
