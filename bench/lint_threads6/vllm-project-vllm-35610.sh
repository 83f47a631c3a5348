# source: https://github.com/vllm-project/vllm/pull/35610 (first post), query 4, rank 4
CCL_TOPO_FABRIC_VERTEX_CONNECTION_CHECK=0 VLLM_SLEEP_WHEN_IDLE=1 vllm serve \
  mistralai/Devstral-Small-2-24B-Instruct-2512 --tool-call-parser mistral \
  --enable-auto-tool-choice --port 8080 --max-model-len 96K --gpu-memory-utilization 0.95 \
  --max-num-seqs 1 --tensor-parallel-size 2
