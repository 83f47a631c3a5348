# source: https://github.com/vllm-project/vllm/pull/39126 (first post), query 4, rank 2 (read through the title follow-up)
# "Example usage" and "Before" commands, verbatim; the excerpt cuts the second inside its JSON value
# (partial word "\"lightseekorg/kimi-k2.5-ea" dropped).
vllm serve deepseek-ai/DeepSeek-V3 \
  --speculative-model eagle3-draft \
  --speculative-config '{"attention_backend": "auto"}'
vllm serve nvidia/Kimi-K2.5-NVFP4 \
    --attention_config.backend FLASHINFER_MLA \
    --speculative-config '{"model":
