# source: https://github.com/vllm-project/vllm/issues/35414 (first post, "deploy scrpit"), query 2, rank 9
vllm serve Qwen/Qwen3.5-35B-A3B --served-model-name Qwen3-30B-A3B  --port 8000 --dtype float16 --tensor-parallel-size 2 --pipeline-parallel-size 2 --max-model-len 8000 --reasoning-parser qwen3 --gpu_memory_utilization 0.85 --distributed-executor-backend ray --max-num-seqs 10
