# source: https://github.com/flashinfer-ai/flashinfer/issues/720 (first post), query 1, rank 9
# copied verbatim (the log lines that follow it are not copied).
VLLM_ATTENTION_BACKEND=FLASHINFER vllm serve /root/autodl-tmp/models/Qwen2-VL-7B-Instruct-FP8-Dynamic --max-model-len 3840
