"""Which language a text is in, for the two this app writes in: Korean and English."""

from __future__ import annotations

import re
from collections.abc import Sequence

# Hangul syllables, the jamo and the compatibility jamo.
HANGUL = re.compile(r"[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]")
HANGUL_SYLLABLE = re.compile(r"[\uac00-\ud7a3]")
_LETTER = re.compile(r"[^\W\d_]")
# A Korean reply quoting English terms (and the reverse) stays in its language.
KOREAN_SHARE = 0.2


def hangul_share(texts: Sequence[str]) -> float:
    """Return the share of letters in `texts` that are Hangul."""
    letters = hangul = 0
    for text in texts:
        letters += len(_LETTER.findall(text))
        hangul += len(HANGUL.findall(text))
    return hangul / letters if letters else 0.0


def detect_language(texts: Sequence[str]) -> str:
    """Return "ko" when Hangul is a real share of the letters, else "en"."""
    return "ko" if hangul_share(texts) >= KOREAN_SHARE else "en"
