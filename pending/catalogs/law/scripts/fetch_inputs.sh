#!/usr/bin/env bash
# Recreate the /tmp inputs that parse_sources.py reads. The two repositories were brought in with the
# session's `fetch` tool (github:StatPan/lawpy, github:ChangooLee/mcp-kr-legislation) into /work/.mirror;
# the two PyPI packages were only downloaded (not installed) to read their target tables.
set -euo pipefail
LAWPY=/work/.mirror/StatPan+lawpy/repo                 # HEAD 675e526 (lawpy 0.2.5)
MCPKR=/work/.mirror/ChangooLee+mcp-kr-legislation/repo  # HEAD 2e5dab4
mkdir -p /tmp/lawpy /tmp/mcpkr /tmp/pipdl
for f in $(git -C "$LAWPY" ls-tree -r --name-only 675e526 specs/kr/); do
  git -C "$LAWPY" show "675e526:$f" > "/tmp/lawpy/$(basename "$f")"
done
git -C "$MCPKR" show 9b95272:src/mcp_kr_legislation/utils/korean_law_api_complete_guide.md > /tmp/mcpkr/guide.md
for f in $(git -C "$MCPKR" ls-tree -r --name-only 2e5dab4 src/mcp_kr_legislation/utils/api_layout/); do
  git -C "$MCPKR" show "2e5dab4:$f" > "/tmp/mcpkr/$(basename "$f")"
done
cd /tmp/pipdl
/work/main/.venv/bin/python -m pip download --no-deps moleg-api==0.3.0 caselaw-mcp==0.11.0 -d .
mkdir -p moleg caselaw
(cd moleg && unzip -qo ../moleg_api-0.3.0-py3-none-any.whl)
(cd caselaw && unzip -qo ../caselaw_mcp-0.11.0-py3-none-any.whl)
# client_targets.json (which guide targets each package names) was made by scripts/client_targets.py.
