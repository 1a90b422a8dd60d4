# ruff: noqa: E501
"""Korean for what model servers do (agent/steps.py: waiting, busy, the window, failures named)."""

KO = {
    "Waiting for the model… %(seconds)s second": "모델을 기다리는 중… %(seconds)s초",
    "The model server is busy; trying again in %(seconds)s second": "모델 서버가 바쁩니다. %(seconds)s초 뒤에 다시 시도합니다",
    "The conversation was longer than this model can read, so it was shortened to fit": "대화가 이 모델이 읽을 수 있는 길이보다 길어서 맞게 줄였습니다",
    "The model server refused the app's key, so there is no answer": "모델 서버가 앱의 키를 받아들이지 않아 답변이 없습니다",
    "The model server does not have this model, so there is no answer": "모델 서버에 이 모델이 없어 답변이 없습니다",
    "The model server stayed busy, so there is no answer; try again soon": "모델 서버가 계속 바빠서 답변이 없습니다. 잠시 후 다시 시도하세요",
    "The conversation is too long for this model even when compressed": "대화를 줄여도 이 모델에게는 너무 깁니다",
    "The model server could not be reached, so there is no answer": "모델 서버에 연결할 수 없어 답변이 없습니다",
    "The model server refused the request, so there is no answer": "모델 서버가 요청을 거부해 답변이 없습니다",
    "Thinking…": "생각하는 중…",
    "%(model)s (no longer offered)": "%(model)s (더 이상 제공되지 않음)",
    "Thought for %(n)s second": "%(n)s초 동안 생각함",
}  # fmt: skip
