# ruff: noqa: E501
"""Korean for single sign-on: the login page's button, sign-in failures, the admin's links."""

KO = {
    "Sign in with %(provider)s": "%(provider)s(으)로 로그인",
    "or": "또는",
    "Password login is off: sign in with single sign-on.": "비밀번호 로그인은 꺼져 있습니다. 통합 로그인(SSO)으로 로그인하세요.",
    "Sign-up is off: sign in with single sign-on.": "회원 가입은 꺼져 있습니다. 통합 로그인(SSO)으로 로그인하세요.",
    "The sign-in expired or was started elsewhere. Please try again.": "로그인이 만료되었거나 다른 곳에서 시작되었습니다. 다시 시도하세요.",
    "The identity provider did not sign you in. Please try again.": "ID 공급자가 로그인을 완료하지 않았습니다. 다시 시도하세요.",
    "The identity provider could not be reached. Please try again later.": "ID 공급자에 연결할 수 없습니다. 잠시 후 다시 시도하세요.",
    "The identity provider's answer could not be verified.": "ID 공급자의 응답을 검증할 수 없습니다.",
    "Your e-mail address's domain may not sign in here.": "이 이메일 주소의 도메인으로는 여기에 로그인할 수 없습니다.",
    "Your account is not in a group that may sign in here.": "계정이 여기에 로그인할 수 있는 그룹에 속해 있지 않습니다.",
    "This account is disabled.": "이 계정은 비활성화되었습니다.",
    "The sign-in did not finish. Please try again.": "로그인이 끝나지 않았습니다. 다시 시도하세요.",
    "Single sign-on": "통합 로그인(SSO)",
    "user": "사용자",
    "issuer": "발급자",
    "subject": "주체(subject)",
    "linked at": "연결한 시각",
    "last sign-in": "마지막 로그인",
    "single sign-on link": "통합 로그인 연결",
    "single sign-on links": "통합 로그인 연결",
}
