#!/usr/bin/env bash
# One short run on the lent H200: build roofkern.cu, time it unprofiled, profile it with ncu
# (--set full + the hierarchical roofline sections, clocks left alone), export every page ncu
# writes, collect the per-clock peaks of the tier counters, and run ncu-roof on the result.
# Everything lands in $OUT/h200.tar.gz (the device tool returns at most 8 files).
set -u
W=/tmp/h200; rm -rf "$W"; mkdir -p "$W"; cd "$(dirname "$0")/../.."
log() { echo "== $*"; }
log machine; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,power.limit --format=csv | tee "$W/nvidia_smi.csv"
nvidia-smi -q > "$W/nvidia_smi_q.txt" 2>&1
ncu --version | tee "$W/ncu_version.txt"
REPORT_PY=$(dirname "$(find / -name ncu_report.py -path '*extras/python*' 2>/dev/null | head -1)")
log "ncu_report at $REPORT_PY"
log build; nvcc -O3 -arch=sm_90 -o "$W/roofkern" scripts/h200/roofkern.cu || exit 1
cuobjdump --dump-sass "$W/roofkern" > "$W/roofkern.sass" 2>&1
grep -oE '(HMMA|IMMA|MUFU|FFMA|DFMA|FADD|FMUL|IADD3|LDS|LDG)[.A-Z0-9]*' "$W/roofkern.sass" | sort | uniq -c | sort -rn | head -20
log timing; ROOFKERN_TIME=1 timeout 60 "$W/roofkern" | tee "$W/timing.txt" | grep -E '^(device|time)'
SECTIONS=""
for s in SpeedOfLight_HierarchicalSingleRooflineChart SpeedOfLight_HierarchicalHalfRooflineChart \
         SpeedOfLight_HierarchicalDoubleRooflineChart SpeedOfLight_HierarchicalTensorRooflineChart; do
  ncu --list-sections 2>/dev/null | grep -q "$s" && SECTIONS="$SECTIONS --section $s"
done
log "profile (sections:$SECTIONS)"
time timeout 240 ncu --set full $SECTIONS --clock-control none --import-source no -f -o "$W/h200_full" "$W/roofkern" > "$W/profile_stdout.txt" 2>&1
tail -3 "$W/profile_stdout.txt"
R="$W/h200_full.ncu-rep"
log exports
ncu --import "$R" --csv --page raw > "$W/h200_full_raw.csv" 2>&1
ncu --import "$R" --csv --page details > "$W/h200_full_details.csv" 2>&1
ncu --import "$R" --page details > "$W/h200_full_console_details.txt" 2>&1
ncu --import "$R" --print-summary per-kernel > "$W/h200_full_console_summary.txt" 2>&1
ncu --import "$R" --csv --print-summary per-kernel > "$W/h200_full_summary.csv" 2>&1
tar czf "$OUT/h200.tar.gz" -C "$W" --exclude roofkern .   # kept if a later step runs out of time
log peaks
ncu --query-metrics > "$W/query_metrics.txt" 2>&1
python3 - "$W" <<'PY' > "$W/peak_metrics.txt"
import sys
names = {l.split()[0] for l in open(sys.argv[1] + "/query_metrics.txt") if l.strip() and "__" in l.split()[0]}
bases = """dram__bytes dram__bytes_read dram__bytes_write dram__sectors lts__t_bytes lts__t_sectors lts__t_requests
lts__lts2xbar_cycles_active lts__t_sectors_srcunit_tex lts__t_sectors_op_read lts__t_sectors_op_write
l1tex__t_bytes l1tex__t_sectors l1tex__t_requests l1tex__m_xbar2l1tex_read_bytes l1tex__m_l1tex2xbar_write_bytes
l1tex__lsu_writeback_active l1tex__lsu_writeback_active_mem_lg l1tex__data_pipe_lsu_wavefronts
l1tex__data_pipe_lsu_wavefronts_mem_shared l1tex__data_bank_reads l1tex__data_bank_writes
sm__inst_executed_pipe_xu sm__inst_executed_pipe_lsu sm__inst_executed_pipe_alu sm__inst_executed_pipe_fma
sm__inst_executed_pipe_tensor sm__inst_executed""".split()
out = []
for b in bases:
    if b in names:
        out += [f"{b}.sum", f"{b}.sum.peak_sustained", f"{b}.sum.per_second", f"{b}.sum.pct_of_peak_sustained_elapsed"]
for b in ("sm__cycles_elapsed", "lts__cycles_elapsed", "dram__cycles_elapsed", "l1tex__cycles_elapsed", "gpc__cycles_elapsed"):
    if b in names:
        out += [f"{b}.avg.per_second", f"{b}.max"]
print(",".join(out + ["gpu__time_duration.sum"]))
PY
time timeout 120 ncu --metrics "$(cat "$W/peak_metrics.txt")" --clock-control none --csv --page raw "$W/roofkern" > "$W/h200_peaks_raw.csv" 2>&1 || echo "peaks run failed"
log "ncu-roof on the device"
export PYTHONPATH="$PWD:$REPORT_PY"
python3 -c "import typer, rich, pyarrow, pandas; print('typer', typer.__version__)"
python3 -m ncu_roof analyze "$R" > "$W/ncu_roof_analyze.txt" 2>&1; echo "analyze rc=$?"
python3 -m ncu_roof analyze "$R" --format json > "$W/ncu_roof_analyze.json" 2>"$W/ncu_roof_analyze.err"; echo "json rc=$?"
head -c 3000 "$W/ncu_roof_analyze.txt"
ROOFKERN_ONLY=vector_add_f32_small timeout 100 python3 -m ncu_roof profile -v -o "$W/prof_vadd" -- "$W/roofkern" > "$W/ncu_roof_profile.txt" 2>&1; echo "profile rc=$?"
tail -20 "$W/ncu_roof_profile.txt"
rm -f "$W/roofkern"
ls -la "$W"
tar czf "$OUT/h200.tar.gz" -C "$W" .
ls -la "$OUT"
