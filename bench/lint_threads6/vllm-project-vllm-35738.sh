# source: https://github.com/vllm-project/vllm/pull/35738 (first post), query 5, rank 1
vllm serve openai/whisper-large-v3-turbo --attention-backend auto
