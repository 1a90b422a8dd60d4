"""Korean for the sandboxed `python` tool's steps (agent/steps.py)."""

KO = {
    "Running Python code": "파이썬 코드 실행 중",
    "Ran Python code": "파이썬 코드를 실행했습니다",
    "Could not run the Python code": "파이썬 코드를 실행하지 못했습니다",
    "Python cannot run on this server right now": "지금은 이 서버에서 파이썬을 실행할 수 없습니다",
    "The code is too long to run": "코드가 너무 길어 실행할 수 없습니다",
}
