"""Fill locale/ko from KO below after `makemessages`; run, then `compilemessages`."""

from __future__ import annotations

import re
import sys
from pathlib import Path

KO = {
    "Name": "이름", "name": "이름", "Token revoked.": "토큰을 폐기했습니다.", "title": "제목",
    "Archive selected conversations": "선택한 대화 보관", "Archived.": "보관했습니다.",
    "Flag selected conversations": "선택한 대화 신고 표시", "Flagged.": "신고 표시했습니다.",
    "Unflag selected conversations": "선택한 대화 신고 해제", "Unflagged.": "신고를 해제했습니다.",
    "feedback": "피드백", "Helpful": "도움이 됨", "Not helpful": "도움이 안 됨", "None": "없음",
    "content": "내용", "Active": "진행 중", "Archived": "보관됨", "Summarized": "요약됨",
    "description": "설명", "service": "서비스", "status": "상태", "summary": "요약",
    "flagged": "신고됨", "flag reason": "신고 사유", "User": "사용자", "Assistant": "어시스턴트",
    "System": "시스템", "reported": "신고됨", "report reason": "신고 사유",
    "Not found": "찾을 수 없음",
    "There is nothing here, or it is not yours.": "여기에는 아무것도 없거나, 내 것이 아닙니다.",
    "Back to your conversations": "내 대화로 돌아가기", "API tokens": "API 토큰",
    "A token lets a script or a websocket client act as you: send it as":
        "토큰이 있으면 스크립트나 웹소켓 클라이언트가 나 대신 동작할 수 있습니다. 이렇게 보내세요:",
    "Copy your new token now; it will not be shown again.":
        "새 토큰을 지금 복사하세요. 다시 보여 주지 않습니다.",
    "Create token": "토큰 만들기", "Prefix": "접두어", "Created": "만든 날짜",
    "Last used": "마지막 사용", "Revoke": "폐기", "Revoked": "폐기됨",
    "No tokens yet.": "아직 토큰이 없습니다.", "Chat": "채팅", "Chat with memory": "기억하는 채팅",
    "Skip to content": "본문으로 건너뛰기", "Show conversations": "대화 목록 보기",
    "Set OPENAI_API_KEY and OPENAI_BASE_URL to use a real model.":
        "실제 모델을 쓰려면 OPENAI_API_KEY와 OPENAI_BASE_URL을 설정하세요.",
    "Offline model": "오프라인 모델", "Main": "주 메뉴", "Conversations": "대화",
    "Documents": "문서", "Admin": "관리", "Log out": "로그아웃", "Log in": "로그인",
    "Sign up": "가입하기", "Language": "언어", "Change": "바꾸기", "You said:": "내가 한 말:",
    "Assistant said:": "어시스턴트의 답:", "Stopped.": "중지했습니다.",
    "The reply failed.": "답변을 만들지 못했습니다.", "Interrupted.": "중단되었습니다.",
    "Cut off at the length limit.": "길이 제한에서 잘렸습니다.",
    "%(n)s step": "단계 %(n)s개", "tool call": "도구 호출", "tool result": "도구 결과",
    "%(n)s source": "출처 %(n)s개", "What the model saw": "모델이 본 내용",
    "Summaries": "요약", "Conversation record": "대화 기록", "none": "없음",
    "Messages sent": "보낸 메시지", "Input tokens": "입력 토큰",
    "estimated %(est)s, actual %(actual)s, window %(window)s":
        "추정 %(est)s, 실제 %(actual)s, 창 %(window)s",
    "Route": "경로", "%(shown)s token": "토큰 %(shown)s개", "Message actions": "메시지 작업",
    "Copy message": "메시지 복사", "Copy": "복사", "Fork from here": "여기서 분기",
    "Good reply": "좋은 답변", "Bad reply": "나쁜 답변", "Report message": "메시지 신고",
    "Report": "신고", "Delete message": "메시지 삭제", "Delete": "삭제", "Untitled": "제목 없음",
    "Select “%(title)s”": "“%(title)s” 선택", "%(shown)s message": "메시지 %(shown)s개",
    "No conversations yet.": "아직 대화가 없습니다.", "Your conversations": "내 대화",
    "New conversation": "새 대화", "Search messages": "메시지 검색",
    "Conversations by project": "프로젝트별 대화", "No project": "프로젝트 없음",
    "Rename conversation": "대화 이름 바꾸기", "Rename": "이름 바꾸기", "New title": "새 제목",
    "Save": "저장", "Cancel": "취소", "Forked from": "분기한 원본:", "Forks:": "분기:",
    "%(shown)s message, %(tokens)s tokens": "메시지 %(shown)s개, 토큰 %(tokens)s개",
    "Conversation actions": "대화 작업", "Project": "프로젝트", "Summarize": "요약하기",
    "Export": "내보내기", "Markdown (.md)": "마크다운 (.md)", "JSON (.json)": "JSON (.json)",
    "Plain text (.txt)": "텍스트 (.txt)", "Unarchive": "보관 해제", "Archive": "보관",
    "The built-in offline model is answering: replies are canned, not from a real model.":
        "내장 오프라인 모델이 답하고 있습니다. 답변은 실제 모델이 아니라 미리 정해진 것입니다.",
    "Summary": "요약", "Load older messages": "이전 메시지 불러오기", "Messages": "메시지",
    "Ask anything. Enter sends, Shift+Enter adds a line, Esc stops a reply.":
        "무엇이든 물어보세요. Enter는 보내기, Shift+Enter는 줄바꿈, Esc는 답변 중지입니다.",
    "Message": "메시지",
    "Write a message… (Enter sends, Shift+Enter for a new line)":
        "메시지 입력… (Enter: 보내기, Shift+Enter: 줄바꿈)",
    "Send": "보내기", "Stop": "중지", "Comment (optional)": "의견 (선택)",
    "Title (optional)": "제목 (선택)", "Title of the new conversation": "새 대화의 제목",
    "Project of the new conversation": "새 대화의 프로젝트", "Search and filter": "검색과 필터",
    "Search titles and messages": "제목과 메시지 검색", "Status": "상태",
    "Any status": "모든 상태", "Any project": "모든 프로젝트", "Service": "서비스",
    "From": "시작일", "To": "종료일", "Sort by": "정렬 기준", "Recently updated": "최근 수정순",
    "Last message": "최근 메시지순", "Message count": "메시지 수", "Order": "순서",
    "Descending": "내림차순", "Ascending": "오름차순", "Apply": "적용", "Clear": "초기화",
    "Messages matching “%(q)s”": "메시지에서 찾은 “%(q)s”",
    "No message matches.": "일치하는 메시지가 없습니다.",
    "Selected conversations": "선택한 대화", "Select all": "모두 선택",
    "Export (zip)": "내보내기 (zip)", "Move to project": "프로젝트로 옮기기",
    "Move to project…": "프로젝트로 옮기기…", "Load more": "더 불러오기", "Projects": "프로젝트",
    "No projects yet.": "아직 프로젝트가 없습니다.", "Project name": "프로젝트 이름",
    "Create project": "프로젝트 만들기", "Knowledge base": "지식 베이스",
    "Documents you add here will be searched when you ask a question about them.":
        "여기에 추가한 문서는 관련 질문을 할 때 검색됩니다.",
    "Uploading documents is coming soon.": "문서 올리기는 곧 제공됩니다.",
    "No account yet?": "아직 계정이 없나요?", "Create account": "계정 만들기",
    "Already have an account?": "이미 계정이 있나요?",
    # JavaScript
    "Copy code": "코드 복사", "Reply received.": "답변을 받았습니다.",
    "Assistant is replying:": "어시스턴트가 답하는 중:", "Working…": "작업 중…",
    "That message could not be sent.": "메시지를 보낼 수 없습니다.",
    "That message is too long.": "메시지가 너무 깁니다.",
    "You are sending messages too fast; wait a moment.":
        "메시지를 너무 빨리 보내고 있습니다. 잠시 기다려 주세요.",
    "A reply is already running.": "이미 답변을 만들고 있습니다.",
    "The model is not available right now.": "지금은 모델을 사용할 수 없습니다.",
    "This conversation no longer exists.": "이 대화는 더 이상 없습니다.",
    "Connection lost. Reconnecting…": "연결이 끊겼습니다. 다시 연결하는 중…",
    "This conversation is not available.": "이 대화를 열 수 없습니다.",
    "%(n)s sources": "출처 %(n)s개", "Something went wrong.": "문제가 생겼습니다.",
    "Report this message": "이 메시지 신고", "Thank you. The message was reported.":
        "고맙습니다. 메시지를 신고했습니다.",
    "Delete this message? The assistant forgets it too.":
        "이 메시지를 삭제할까요? 어시스턴트도 이 메시지를 잊습니다.",
    "Message deleted.": "메시지를 삭제했습니다.",
    "What was good? (optional)": "무엇이 좋았나요? (선택)",
    "What went wrong? (optional)": "무엇이 잘못됐나요? (선택)",
    "Thanks for the feedback.": "피드백 고맙습니다.",
    "Reporting is not available yet.": "아직 신고 기능을 쓸 수 없습니다.",
    "Summarizing…": "요약하는 중…", "Conversation archived.": "대화를 보관했습니다.",
    "Conversation restored.": "대화를 보관 해제했습니다.", "Moved.": "옮겼습니다.",
    "Delete this conversation and all its messages? This cannot be undone.":
        "이 대화와 모든 메시지를 삭제할까요? 되돌릴 수 없습니다.",
    "Could not load older messages.": "이전 메시지를 불러오지 못했습니다.",
    "Copied.": "복사했습니다.",
    "Could not load more conversations.": "대화를 더 불러오지 못했습니다.",
    "%(n)s selected": "%(n)s개 선택됨",
    "%(n)s conversation archived.": "대화 %(n)s개를 보관했습니다.",
    "Delete %(n)s conversation and all its messages? This cannot be undone.":
        "대화 %(n)s개와 모든 메시지를 삭제할까요? 되돌릴 수 없습니다.",
    "%(n)s conversation deleted.": "대화 %(n)s개를 삭제했습니다.",
    "%(n)s conversation moved.": "대화 %(n)s개를 옮겼습니다.",
    "Projects cannot be changed here yet.": "아직 여기서 프로젝트를 바꿀 수 없습니다.",
    "New name for the project": "프로젝트의 새 이름",
    # Documents (knowledge base)
    "Text": "텍스트", "Markdown": "마크다운", "PDF": "PDF", "file name": "파일 이름",
    "type": "유형", "size": "크기",
    "Added “%(title)s” (%(n)d chunks).": "“%(title)s” 문서를 추가했습니다(조각 %(n)d개).",
    "Document not found.": "문서를 찾을 수 없습니다.",
    "File": "파일", "Delete document": "문서 삭제",
    "Delete “%(title)s” and its %(n)s chunks? The assistant will no longer find it.":
        "“%(title)s” 문서와 조각 %(n)s개를 삭제할까요? 어시스턴트가 더는 찾지 못합니다.",
    "%(n)s chunk": "조각 %(n)s개", "Sections": "섹션", "(untitled)": "(제목 없음)",
    "Documents you add here are searched when you ask about them, and cited in the answer.":
        "여기에 추가한 문서는 질문할 때 검색되고, 답변에 출처로 표시됩니다.",
    "%(extensions)s, up to %(max_mb)s MB": "%(extensions)s, 최대 %(max_mb)s MB",
    "Upload": "올리기", "Your documents": "내 문서", "Title": "제목", "Type": "형식",
    "Chunks": "조각", "Added": "추가한 날짜", "Actions": "작업",
    "No documents yet.": "아직 문서가 없습니다.",
    "Deleted “%(title)s”.": "“%(title)s” 문서를 삭제했습니다.",
    # Branches
    "Versions": "버전", "Previous version": "이전 버전", "Next version": "다음 버전",
    "Edit message": "메시지 수정", "Edit": "수정", "Regenerate reply": "답변 다시 만들기",
    "Regenerate": "다시 만들기", "Continue reply": "답변 이어 쓰기", "Continue": "이어 쓰기",
    # Models and instructions
    "estimated: the model server reported no usage":
        "추정치: 모델 서버가 사용량을 알려 주지 않았습니다",
    "Default model": "기본 모델", "Custom instructions": "사용자 지침",
    "Added to the instructions of every conversation, e.g. who you are and how you like answers.":
        "모든 대화의 지침에 덧붙습니다. 예: 내가 누구인지, 어떤 답변을 좋아하는지.",
    "The site's default": "사이트 기본값", "default model": "기본 모델",
    "custom instructions": "사용자 지침", "Settings saved.": "설정을 저장했습니다.",
    "The user": "사용자", "Its first words": "첫 문장", "The model": "모델", "model": "모델",
    "system prompt": "시스템 프롬프트", "temperature": "온도", "Settings": "설정",
    "New conversations use this model unless you pick another in the conversation.":
        "대화에서 다른 모델을 고르지 않으면 새 대화는 이 모델을 씁니다.",
    "Model": "모델", "The model that answers in this conversation": "이 대화에서 답하는 모델",
    "Instructions": "지침", "System prompt for this conversation": "이 대화의 시스템 프롬프트",
    "e.g. You are a patient Korean tutor. Answer in short sentences.":
        "예: 당신은 친절한 한국어 선생님입니다. 짧은 문장으로 답하세요.",
    "Temperature (0–2; blank: the model's default)": "온도 (0–2, 비우면 모델 기본값)",
    "Your custom instructions in Settings apply to every conversation.":
        "설정의 사용자 지침은 모든 대화에 적용됩니다.",
    "Model of the new conversation": "새 대화의 모델", "Your default model": "내 기본 모델",
    # Imports, sharing, filters, feedback
    "Filter": "필터", "Written by": "쓴 사람", "Anyone": "누구나", "You": "나",
    "The assistant": "어시스턴트", "Holding": "포함한 것", "Anything": "무엇이든",
    "Thinking steps": "생각 단계", "A tool call": "도구 호출", "A tool result": "도구 결과",
    "Sources": "출처", "Only replies that used a tool": "도구를 쓴 답변만", "Show": "보기",
    "Show all": "모두 보기",
    "Showing %(n)s matching message of this branch.":
        "이 가지에서 조건에 맞는 메시지 %(n)s개를 보여 줍니다.",
    "Share": "공유",
    "Anyone with a link can read this branch as it is now, without logging in. "
    "Later messages are not shown.":
        "링크가 있는 사람은 로그인하지 않고도 지금 이 가지를 읽을 수 있습니다. "
        "이후 메시지는 보이지 않습니다.",
    "Create a link": "링크 만들기", "Links to this conversation": "이 대화의 링크",
    "Shared conversation": "공유된 대화",
    "A shared conversation, as it was on": "공유된 대화입니다. 기준 시각:",
    "The user said:": "사용자의 말:", "No messages.": "메시지가 없습니다.",
    "Only the first messages are shown.": "앞부분 메시지만 보여 줍니다.",
    "Made with": "만든 도구:",
    "a self-hosted chat app that remembers.": "기억하는 자체 호스팅 채팅 앱.",
    "Import…": "가져오기…",
    "This app’s JSON export, or ChatGPT’s, Claude’s, Open WebUI’s or LibreChat’s export "
    "(.json or .zip)":
        "이 앱의 JSON 내보내기, 또는 ChatGPT·Claude·Open WebUI·LibreChat의 "
        "내보내기 파일(.json, .zip)",
    "Matching messages written by": "찾은 메시지를 쓴 사람",
    "Messages by anyone": "누구의 메시지든", "Your messages": "내 메시지", "Replies": "답변",
    "Share link": "공유 링크", "Link copied.": "링크를 복사했습니다.",
    "Revoke this link? It will stop working at once.":
        "이 링크를 폐기할까요? 바로 열리지 않게 됩니다.",
    "Link revoked.": "링크를 폐기했습니다.",
    "Link created and copied.": "링크를 만들고 복사했습니다.",
    "Link created.": "링크를 만들었습니다.", "Importing %(name)s…": "%(name)s 가져오는 중…",
    "Imported %(n)s conversation.": "대화 %(n)s개를 가져왔습니다.",
    "The import failed.": "가져오지 못했습니다.",
    "Mask and send": "가리고 보내기", "Send anyway": "그대로 보내기",
    "resident registration number": "주민등록번호", "alien registration number": "외국인등록번호",
    "phone number": "전화번호", "card number": "카드 번호", "bank account number": "계좌번호",
    "e-mail address": "이메일 주소", "passport number": "여권번호",
    "password or secret key": "비밀번호나 비밀 키",
    "This message looks like it holds: %(kinds)s. It was not sent.":
        "이 메시지에 다음 정보가 있는 것 같습니다: %(kinds)s. 보내지 않았습니다.",
    "sensitive information": "민감한 정보", "Any kind": "모든 종류",
    "Attachments": "첨부 파일", "Files to send": "보낼 파일", "Attach a file": "파일 첨부",
    "Attach an image or a document (or drop or paste it here)":
        "이미지나 문서를 첨부하세요 (여기에 끌어 놓거나 붙여 넣어도 됩니다)",
    "At most 10 files per message.": "메시지 하나에 파일은 10개까지입니다.",
    "Remove %(name)s": "%(name)s 빼기", "%(name)s: %(problem)s": "%(name)s: %(problem)s",
    "upload failed": "올리지 못함",
    "Wait until the files are uploaded.": "파일이 다 올라갈 때까지 기다려 주세요.",
    "Delete this message and everything after it on this branch? The assistant forgets them "
    "too.": "이 메시지와 이 가지에서 그 뒤의 모든 메시지를 삭제할까요? 어시스턴트도 잊습니다.",
    "Could not show that branch; reload the page.":
        "그 가지를 보여 주지 못했습니다. 페이지를 새로 고치세요.",
    "Answers now come from %(model)s.": "이제 %(model)s 모델이 답합니다.",
    "Answers now come from your default model.": "이제 기본 모델이 답합니다.",
    "Instructions saved.": "지침을 저장했습니다.",
    # Memory (/settings/memory/, "Memories used" under a reply)
    "memory": "메모리", "Memory": "메모리", "Memories": "메모리",
    "Unknown action.": "알 수 없는 동작입니다.",
    (
        "Facts about you that the assistant may use in every conversation. It saves them when"
        " you tell it something lasting about yourself or ask it to remember; you can add, edit"
        " and delete them here. The most relevant ones go with each message you send."
    ): (
        "어시스턴트가 모든 대화에서 참고할 수 있는 나에 관한 사실입니다. "
        "오래 두고 알아야 할 것을 말하거나 기억해 달라고 하면 어시스턴트가 저장하고, "
        "여기서 추가·수정·삭제할 수 있습니다. "
        "메시지를 보낼 때마다 가장 관련 있는 것들이 함께 전달됩니다."
    ),
    "Use and save memories": "메모리 사용 및 저장",
    "Memory is off: no memory goes with your messages and the assistant saves none.":
        "메모리가 꺼져 있습니다. 메시지에 메모리가 함께 가지 않고, 어시스턴트도 저장하지 않습니다.",
    "e.g. I am vegetarian": "예: 나는 채식주의자야", "New memory": "새 메모리", "Add": "추가",
    "saved by the assistant": "어시스턴트가 저장함", "added by you": "내가 추가함",
    "a conversation": "대화", "from a deleted conversation": "삭제된 대화에서",
    "No memories yet.": "아직 메모리가 없습니다.", "Memories used": "사용한 메모리",
    "Recalled messages": "다시 불러온 메시지",
}  # fmt: skip

ENTRY = re.compile(
    r'^msgid ((?:".*"\n)+)(msgid_plural (?:".*"\n)+)?((?:msgstr.*\n(?:".*"\n)*)+)', re.M
)


def _unquote(block: str) -> str:
    return "".join(re.findall(r'"(.*)"', block)).replace('\\"', '"')


def _quote(text: str) -> str:
    return '"' + text.replace('"', '\\"') + '"'


def fill(path: Path) -> list[str]:
    """Write KO's translations into one .po file; return the msgids still missing."""
    missing: list[str] = []
    text = path.read_text(encoding="utf-8").replace('#, fuzzy\nmsgid ""', 'msgid ""', 1)

    def replace(match: re.Match[str]) -> str:
        msgid = _unquote(match.group(1))
        if not msgid:
            return match.group(0)
        ko = KO.get(msgid)
        if ko is None:
            missing.append(msgid)
            return match.group(0)
        head = f"msgid {match.group(1)}" + (match.group(2) or "")
        key = "msgstr[0]" if match.group(2) else "msgstr"
        return f"{head}{key} {_quote(ko)}\n"

    text = ENTRY.sub(replace, text)
    # makemessages guesses a new entry from a similar old one and marks it fuzzy (which
    # compilemessages leaves out); every entry here is filled from KO, so drop the guesses.
    text = re.sub(r"^#, fuzzy\n", "", text, flags=re.M)
    text = re.sub(r"^#, fuzzy, (.*)\n", r"#, \1\n", text, flags=re.M)
    text = re.sub(r"^#\| .*\n", "", text, flags=re.M)  # the guess's old words, every line
    text = text.replace('"Language: \\n"', '"Language: ko\\n"')
    path.write_text(text, encoding="utf-8")
    return missing


def _more() -> None:
    """Merge the dicts of locale/ko_more/*.py (one file per feature, so parallel work never
    edits the same dict)."""
    import importlib.util

    for path in sorted((Path(__file__).resolve().parent / "ko_more").glob("*.py")):
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        KO.update(module.KO)


if __name__ == "__main__":
    _more()
    base = Path(__file__).resolve().parent / "ko" / "LC_MESSAGES"
    gaps = [m for name in ("django.po", "djangojs.po") for m in fill(base / name)]
    for gap in gaps:
        print("missing:", gap)
    sys.exit(1 if gaps else 0)
