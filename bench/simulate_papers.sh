#!/usr/bin/env bash
# Reproduces four seed-paper experiments in the simulator and prints our
# simulated figure beside the paper's measured one. Every figure we print is
# simulated (SoC profiles in profiles/soc/, model shapes without weights).
# Usage: bench/simulate_papers.sh [HETERO_BINARY]
set -euo pipefail
hetero="${1:-$(dirname "$0")/../build/bin/hetero}"
sim() { "$hetero" simulate --json "$@"; }
val() { python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
ratio() { python3 -c "print(f'{$1/$2:.2f}')"; }
pct() { python3 -c "print(f'{($1/$2-1)*100:+.1f}%')"; }

G3=snapdragon-8-gen-3
# 1. HeteroLLM §5.2: Hetero-tensor vs Hetero-layer prefill, Llama-8B W4A16, 256 tokens.
lay=$(sim --profile $G3 --shape llama-8b --prompt-len 256 --plan layer | val simulated_prefill_seconds)
ten=$(sim --profile $G3 --shape llama-8b --prompt-len 256 --plan tensor | val simulated_prefill_seconds)
echo "tensor vs layer prefill (llama-8b q4_0, 256 tokens): simulated $(pct $lay $ten) ($(ratio 256 $lay) -> $(ratio 256 $ten) tok/s simulated); paper +30.2% avg (up to +40.8%)"
# 2. HeteroLLM Figure 14: misaligned 525 tokens, Padding (NPU graph of 1024, layer-level) vs Hetero-tensor (512 aligned + 13 remainder).
pad=$(sim --profile $G3 --shape llama-8b --prompt-len 525 --chunk 1024 --plan layer --shapes pad | val simulated_prefill_seconds)
cut=$(sim --profile $G3 --shape llama-8b --prompt-len 525 --chunk 1024 --plan tensor --shapes cut | val simulated_prefill_seconds)
onl=$(sim --profile $G3 --shape llama-8b --prompt-len 525 --chunk 1024 --plan layer --shapes compile | val simulated_prefill_seconds)
echo "525 tokens, padding vs tensor-level cut: simulated $(ratio $pad $cut)x; paper 2.21x"
echo "525 tokens, online-prepare vs tensor-level cut: simulated $(ratio $onl $cut)x; paper 2.24x"
# 3. HeteroLLM §5.3: GPU+NPU decode vs GPU alone, Llama-8B.
gpu=$(sim --profile $G3 --shape llama-8b --prompt-len 256 --plan gpu | val simulated_decode_ms_per_token)
tdec=$(sim --profile $G3 --shape llama-8b --prompt-len 256 --plan tensor | val simulated_decode_ms_per_token)
echo "decode GPU+NPU vs GPU (llama-8b q4_0): simulated $(pct $gpu $tdec) ($gpu -> $tdec ms/token simulated); paper +23.4%"
# 4. llm.npu §4.2: chunked NPU prefill (chunk 256, CPU for float ops) vs CPU alone at 1,024 tokens, Llama-2-7B W8A8.
for soc in snapdragon-8-gen-3 snapdragon-8-gen-2; do
  cpu=$(sim --profile $soc --shape llama-7b --wtype q8_0 --prompt-len 1024 --plan cpu | val simulated_prefill_seconds)
  npu=$(sim --profile $soc --shape llama-7b --wtype q8_0 --prompt-len 1024 --plan solver --units cpu,npu | val simulated_prefill_seconds)
  echo "$soc: chunked NPU prefill vs CPU (llama-7b q8_0, 1024 tokens): simulated $(ratio $cpu $npu)x; paper 18.17-38.4x (8 Gen 3), 21.3-41.3x (8 Gen 2)"
done
