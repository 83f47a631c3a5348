# source: https://github.com/sgl-project/sglang/pull/21253 (first post), query 8, rank 6
SGLANG_USE_AITER=1 python3 -m sglang.launch_server \
  --model-path /dockerx/raid/models/gpt-oss-120b/ \
  --tp 8 \
  --trust-remote-code \
  --chunked-prefill-size 131072 \
  --max-running-requests 128 \
  --mem-fraction-static 0.85 \
  --prefill-attention-backend aiter \
  --decode-attention-backend aiter \
  --page-size 64 \
  --disable-radix-cache \
  --kv-cache-dtype fp8_e4m3 \
  --port 8000
