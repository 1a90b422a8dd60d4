# Sourced by bin/run and bin/test: find or install uv, then install the locked dependencies.
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH="$HOME/.local/bin:$PATH"
if ! command -v uv >/dev/null 2>&1; then
  echo "Installing uv…" >&2
  python3 -m pip install --quiet --user uv 2>/dev/null || python3 -m pip install --quiet uv
fi
# --inexact: an optional group installed beside (the real model, `.ci/run`) stays.
uv sync --frozen --inexact --quiet
