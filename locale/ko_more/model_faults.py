# ruff: noqa: E501
"""Korean for why a reply failed: what the model server did (agent/steps.py, MODEL_FAULTS)."""

KO = {
    "The model server failed, so the answer stops here": "모델 서버에 문제가 생겨 답변이 여기서 멈췄습니다",
    "The model server ended the answer before it was finished": "모델 서버가 답변을 끝맺기 전에 멈췄습니다",
    "The model server did not answer within %(seconds)s second": "모델 서버가 %(seconds)s초 안에 답하지 않았습니다",
    "The model server sent nothing for %(seconds)s second, so the answer stops here": "모델 서버가 %(seconds)s초 동안 아무것도 보내지 않아 답변이 여기서 멈췄습니다",
}  # fmt: skip
