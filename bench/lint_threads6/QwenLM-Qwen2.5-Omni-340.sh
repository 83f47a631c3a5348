# source: https://github.com/QwenLM/Qwen2.5-Omni/issues/340 (first post), query 3, rank 4
# the command line of the post, verbatim (it stands alone on its line between two prose lines).
python -m vllm.entrypoints.openai.api_server
