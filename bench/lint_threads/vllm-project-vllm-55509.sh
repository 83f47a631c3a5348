# source: https://github.com/vllm-project/vllm/issues/55509 (first post), query 1, rank 3
# copied verbatim from the issues corpus excerpt; the excerpt ends inside the "arm B" comment line
# (partial word "FLASHI" dropped), so the second command is not shown.
# arm A — default backend
vllm serve RedHatAI/Qwen3.8-27B-INT4 --tensor-parallel-size 2 \
  --gpu-memory-utilization 0.90 --max-model-len 100352 --max-num-seqs 32 \
  --mamba-cache-mode align --max-num-batched-tokens 3135

# arm B — add only --attention-backend
