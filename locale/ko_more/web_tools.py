# ruff: noqa: E501
"""Korean for the web tools' steps (agent/steps.py: web_search, read_url and web.*)."""

KO = {
    "Searching the web": "웹 검색 중",
    "Searched the web": "웹을 검색했습니다",
    "Could not search the web": "웹을 검색하지 못했습니다",
    "Opening a web page": "웹 페이지 여는 중",
    "Opened a web page": "웹 페이지를 열어 읽었습니다",
    "Could not open that web page": "그 웹 페이지를 열지 못했습니다",
    "The web search did not answer this time": "이번에는 웹 검색이 응답하지 않았습니다",
    "Only web pages (http or https addresses) can be opened": "웹 페이지(http 또는 https 주소)만 열 수 있습니다",
    "Did not open %(host)s: it is not on the public internet": "%(host)s은(는) 공개 인터넷에 있는 주소가 아니어서 열지 않았습니다",
    "Could not reach %(host)s": "%(host)s에 연결하지 못했습니다",
    "The page at %(host)s took too long to load": "%(host)s의 페이지를 불러오는 데 너무 오래 걸렸습니다",
    "The page at %(host)s forwarded to other addresses too many times": "%(host)s의 페이지가 다른 주소로 너무 여러 번 넘겨서 열지 못했습니다",
    "The page at %(host)s answered with an error (%(status)s)": "%(host)s의 페이지가 오류로 응답했습니다 (%(status)s)",
    "Cannot read this kind of file (%(kind)s)": "이런 종류의 파일은 읽을 수 없습니다 (%(kind)s)",
    "Found no readable text on the page at %(host)s": "%(host)s의 페이지에서 읽을 수 있는 글을 찾지 못했습니다",
}  # fmt: skip
