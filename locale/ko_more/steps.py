"""Korean for a reply's steps (agent/steps.py), their details and the offline model's name."""

KO = {
    # route, retrieve
    "Decided to search your documents": "내 문서를 검색하기로 했습니다",
    "Decided to answer without searching your documents":
        "문서를 검색하지 않고 답하기로 했습니다",
    "Searched your documents: %(count)s passage found":
        "내 문서를 검색했습니다: 관련 부분 %(count)s개",
    "Searched your documents: nothing relevant found":
        "내 문서를 검색했지만 관련 내용이 없었습니다",
    "Could not search your documents this time": "이번에는 내 문서를 검색하지 못했습니다",
    # memory
    "This is the start of the conversation": "대화의 첫 메시지입니다",
    "Looked at %(messages)s earlier message": "앞선 메시지 %(messages)s개를 살펴봤습니다",
    "Looked at %(messages)s earlier message and what was kept of older ones":
        "앞선 메시지 %(messages)s개와 이전 대화에서 남겨 둔 내용을 살펴봤습니다",
    "Summarized %(summarized)s older message to keep the conversation in memory":
        "대화를 기억해 두려고 오래된 메시지 %(summarized)s개를 요약했습니다",
    "Could not summarize older messages this time, so all of them were kept":
        "이번에는 오래된 메시지를 요약하지 못해 모두 그대로 두었습니다",
    "Used %(count)s saved memory": "저장된 메모리 %(count)s개를 참고했습니다",
    "Looked back at %(count)s older message": "오래된 메시지 %(count)s개를 다시 찾아봤습니다",
    "Could not look through your memories this time": "이번에는 메모리를 찾아보지 못했습니다",
    "Could not look back through older messages this time":
        "이번에는 오래된 메시지를 찾아보지 못했습니다",
    # generate
    "Writing the answer": "답변 작성 중",
    "Writing the answer with what the tools returned": "도구가 찾은 내용으로 답변 작성 중",
    "Writing the answer without using more tools": "도구를 더 쓰지 않고 답변 작성 중",
    "This model cannot use tools, so it answered without them":
        "이 모델은 도구를 쓸 수 없어 도구 없이 답했습니다",
    "This cut-off reply could not be kept in the conversation's memory":
        "중간에 끊긴 이 답변을 대화의 기억에 남기지 못했습니다",
    # tools: calling, done, failed
    "Using the calculator": "계산기 사용 중",
    "Used the calculator": "계산기를 사용했습니다",
    "The calculator could not work that out": "계산기로 계산하지 못했습니다",
    "Checking the clock": "현재 시각 확인 중",
    "Checked the clock": "현재 시각을 확인했습니다",
    "Could not read the clock": "현재 시각을 확인하지 못했습니다",
    "Searching your documents": "내 문서 검색 중",
    "Searched your documents": "내 문서를 검색했습니다",
    "Could not search your documents": "내 문서를 검색하지 못했습니다",
    "Opening a section of your documents": "문서의 한 부분을 여는 중",
    "Read a section of your documents": "문서의 한 부분을 읽었습니다",
    "Could not open that section of your documents": "문서의 그 부분을 열지 못했습니다",
    "Searching your other conversations": "다른 대화 검색 중",
    "Searched your other conversations": "다른 대화를 검색했습니다",
    "Could not search your other conversations": "다른 대화를 검색하지 못했습니다",
    "Saving a memory": "메모리 저장 중",
    "Saved a memory": "메모리를 저장했습니다",
    "Could not save that as a memory": "메모리에 저장하지 못했습니다",
    "Deleting a memory": "메모리 삭제 중",
    "Deleted a memory": "메모리를 삭제했습니다",
    "Could not delete that memory": "메모리를 삭제하지 못했습니다",
    "Using the tool %(tool)s": "%(tool)s 도구 사용 중",
    "Used the tool %(tool)s": "%(tool)s 도구를 사용했습니다",
    "The tool %(tool)s did not work this time": "이번에는 %(tool)s 도구가 동작하지 않았습니다",
    # tool failures, with the reason
    "The calculator cannot divide by zero": "계산기는 0으로 나눌 수 없습니다",
    "The result is too large for the calculator": "결과가 너무 커서 계산할 수 없습니다",
    "The result is not a real number": "결과가 실수가 아닙니다",
    "The expression is too long for the calculator": "식이 너무 길어 계산할 수 없습니다",
    "The calculator could not read that expression": "계산기가 그 식을 읽지 못했습니다",
    "Found no section %(section)s in your documents":
        "내 문서에서 %(section)s 부분을 찾지 못했습니다",
    "Did not recognise the time zone %(zone)s": "%(zone)s 시간대를 알 수 없습니다",
    "Memory is off, so nothing was changed": "메모리가 꺼져 있어 아무것도 바꾸지 않았습니다",
    "Did not save this as a memory: it looks like an ID number":
        "신분증 번호로 보여 메모리에 저장하지 않았습니다",
    "Did not save this as a memory: it looks like a card or bank account number":
        "카드 번호나 계좌 번호로 보여 메모리에 저장하지 않았습니다",
    "Did not save this as a memory: it looks like a phone number or e-mail address":
        "전화번호나 이메일 주소로 보여 메모리에 저장하지 않았습니다",
    "Did not save this as a memory: it looks like a password or secret key":
        "비밀번호나 비밀 키로 보여 메모리에 저장하지 않았습니다",
    "Did not save this as a memory: a memory holds at most %(limit)s characters":
        "메모리 하나는 %(limit)s자까지라서 저장하지 않았습니다",
    "Did not save this as a memory: you already have %(limit)s memories":
        "메모리가 이미 %(limit)s개라서 저장하지 않았습니다",
    "No saved memory matched, so nothing was deleted":
        "일치하는 메모리가 없어 아무것도 삭제하지 않았습니다",
    # a tool step's details, the offline model
    "Input": "입력",
    "Result": "결과",
    "Built-in offline model": "내장 오프라인 모델",
}  # fmt: skip
