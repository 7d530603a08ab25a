#!/usr/bin/env bash
# The second H200 run: `ncu-roof profile` end to end with the real ncu (the first run's profile
# crashed in the forked report reader, since removed), SIGTERM during a real profile (no ncu or
# program left, no private folder), and a small `--fast` report of every kernel as a fixture.
set -u
W=/tmp/h200b; rm -rf "$W"; mkdir -p "$W"; cd "$(dirname "$0")/../.."
REPORT_PY=$(dirname "$(find / -name ncu_report.py -path '*extras/python*' 2>/dev/null | head -1)")
export PYTHONPATH="$PWD:$REPORT_PY"
nvcc -O3 -arch=sm_90 -o "$W/roofkern" scripts/h200/roofkern.cu || exit 1
echo "== profile, one kernel"
ROOFKERN_ONLY=vector_add_f32_small timeout 150 python3 -m ncu_roof profile -v -o "$W/prof_vadd" -- "$W/roofkern" > "$W/profile_vadd.txt" 2>&1; echo "profile rc=$?"
tail -25 "$W/profile_vadd.txt"
echo "== profile --fast, every kernel"
timeout 200 python3 -m ncu_roof profile --fast -o "$W/h200_fast" --format json --analysis-output "$W/h200_fast.json" -- "$W/roofkern" > "$W/profile_fast.txt" 2>&1; echo "fast rc=$?"
tail -6 "$W/profile_fast.txt"
echo "== SIGTERM during a profile"
mkdir -p "$W/term" && cd "$W/term"
ROOFKERN_ONLY=sgemm python3 -m ncu_roof profile -o "$W/term/t" -- "$W/roofkern" > "$W/term.txt" 2>&1 &
P=$!; sleep 12; kill -TERM $P; wait $P; echo "term rc=$? (143 expected)"
sleep 2; echo "left running: $(pgrep -fa 'roofkern|ncu ' | grep -v pgrep | wc -l)"; ls -la "$W/term"; tail -3 "$W/term.txt"
cd - >/dev/null
rm -f "$W/roofkern"; rm -rf "$W/term"
tar czf "$OUT/h200b.tar.gz" -C "$W" .
ls -la "$W" "$OUT"
