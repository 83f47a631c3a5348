# source: https://github.com/vllm-project/vllm/issues/15389 (first post), query 1, rank 4
# copied verbatim; the first post quotes the block, so the markdown quote markers "> " are not copied.
export VLLM_ATTENTION_BACKEND=FLASHINFER
vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 8196 --gpu-memory-utilization 0.95
