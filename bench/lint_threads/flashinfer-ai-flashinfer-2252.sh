# source: https://github.com/flashinfer-ai/flashinfer/issues/2252 (first post), query 1, rank 8
# copied verbatim (the log lines that follow it in the same block are not copied).
VLLM_ATTENTION_BACKEND=FLASHINFER vllm serve --model nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16 \
    --dtype auto \
    --trust-remote-code \
    --served-model-name nemotron \
    --host 0.0.0.0 \
    --port 5000 \
    --enable-auto-tool-choice \
    --tool-call-parser qwen3_coder \
    --reasoning-parser deepseek_r1 
