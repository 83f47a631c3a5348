# source: https://github.com/vllm-project/vllm/issues/14817 (first post, "Command executed"), query 2, rank 10 (read through the title follow-up)
vllm serve google/gemma-3-4b-it --tensor-parallel-size 2 --dtype=half --gpu-memory-utilization 0.9 --max-model-len=17370
