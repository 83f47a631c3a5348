# source: https://github.com/vllm-project/vllm/issues/3028 (first post), query 4, rank 2
# copied verbatim: the line of --model=my_model has no trailing backslash in the post.
CUDA_VISIBLE_DEVICES=0 python3 -m vllm.entrypoints.api_server \
                               --model=my_model
                               --tensor-parallel-size 1 \
                               --dtype float16 \
                               --kv-cache-dtype fp8_e5m2 \
                               --swap-space 32 \
                               --gpu-memory-utilization 0.95
