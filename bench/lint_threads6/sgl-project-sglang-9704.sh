# source: https://github.com/sgl-project/sglang/issues/9704 (first post, "Server command"), query 6, rank 3
# both server commands of the post ("with flashinfer", "with trtllm_mla"), verbatim; the client command is not a launch.
python3 -m sglang.launch_server \
  --model nvidia/DeepSeek-R1-0528-FP4 \
  --trust-remote-code \
  --quantization modelopt_fp4 \
  --attention-backend flashinfer --kv-cache-dtype fp8_e4m3 \
  --tp-size 4 \
  --mem-fraction-static 0.80 \
  --max-running-requests 1024 \
  --cuda-graph-max-bs 256 \
  --host 0.0.0.0 \
  --port 30001 

python3 -m sglang.launch_server \
  --model nvidia/DeepSeek-R1-0528-FP4 \
  --trust-remote-code \
  --quantization modelopt_fp4 \
  --attention-backend trtllm_mla --kv-cache-dtype fp8_e4m3 \
  --tp-size 4 \
  --mem-fraction-static 0.80 \
  --max-running-requests 1024 \
  --cuda-graph-max-bs 256 \
  --host 0.0.0.0 \
  --port 30001 
