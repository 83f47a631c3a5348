# source: https://github.com/vllm-project/vllm/issues/2778 (first post), query 4, rank 4
# two commands: the first, the post says, works; the second fails.
docker run --rm --gpus "device=8" vllm/vllm-openai:v0.3.0 --model=facebook/opt-125m
docker run --rm --gpus "device=8" vllm/vllm-openai:v0.3.0 --model=facebook/opt-125m --kv-cache-dtype=fp8_e5m2
