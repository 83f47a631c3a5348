# source: https://github.com/vllm-project/vllm/issues/15457 (first post), query 3, rank 8
# the excerpt ends inside the last value ("3276"); that partial word is dropped (amendment of the fifth round).
vllm serve DeepSeek-R1-32B-FULL --port 11435 --tensor-parallel-size 4 --max-model-len
